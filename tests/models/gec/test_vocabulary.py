"""The spelling vocabulary: built from training targets and mono data, shipped beside the model, named in its
manifest."""

from __future__ import annotations

import json
from pathlib import Path

from models.gec.vocabulary import ship_vocabulary
from service.engine.manifest import ModelManifest, file_sha256
from service.text.spelling import load_vocabulary
from tests.conftest import FIXTURE_MODEL, SPELLING_CORPUS, copy_with_vocabulary


def test_vocabulary_is_shipped_and_named_in_the_manifest(tmp_path: Path) -> None:
    model = copy_with_vocabulary(FIXTURE_MODEL, tmp_path / "model", SPELLING_CORPUS + " Owl owl OWL! Tom's cat.")
    manifest = ModelManifest.load(model)
    assert manifest.vocabulary == "vocabulary.txt"
    assert manifest.files_sha256["vocabulary.txt"] == file_sha256(model / "vocabulary.txt")
    assert manifest.files_sha256["tokenizer.json"] == file_sha256(model / "tokenizer.json")  # the others stay
    info = manifest.extra["vocabulary_info"]
    assert info["min_count"] == 2 and info["sources"] == ["toy.train.detok.tgt", "en.toy.txt.gz"]
    vocabulary = load_vocabulary(model / "vocabulary.txt")
    assert info["words"] == len(vocabulary)
    # lowercased letter runs, counted over both sources (the corpus is in each once), most frequent first
    assert vocabulary["owl"] == 2 * (1 + 3) and vocabulary["the"] == 4 and vocabulary["tom"] == 2 * 2
    assert next(iter(vocabulary)) == "owl" and all(w.isalpha() and w.islower() for w in vocabulary)
    assert "vocabulary" in json.loads((model / "manifest.json").read_text())


def test_a_rebuild_replaces_the_vocabulary(tmp_path: Path) -> None:
    model = copy_with_vocabulary(FIXTURE_MODEL, tmp_path / "model")
    data = tmp_path / "model-data"
    ship_vocabulary(model, data, min_count=4)
    manifest = ModelManifest.load(model)
    assert load_vocabulary(model / "vocabulary.txt") == {"an": 4, "the": 4}
    assert manifest.extra["vocabulary_info"]["min_count"] == 4
    assert manifest.files_sha256["vocabulary.txt"] == file_sha256(model / "vocabulary.txt")
