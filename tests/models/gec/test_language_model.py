"""The n-gram language model: built from the training targets and the monolingual data, shipped beside the model,
named in its manifest, and what it counted."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from models.gec.language_model import count_ngrams
from service.engine.manifest import ModelManifest, file_sha256
from service.text.ngrams import NgramModel
from tests.conftest import FIXTURE_MODEL, copy_with_language_model

CORPUS = "I saw a apple yesterday. The cat likes the old car."


def test_the_model_is_shipped_and_named_in_the_manifest(tmp_path: Path) -> None:
    model = copy_with_language_model(FIXTURE_MODEL, tmp_path / "model", CORPUS)
    manifest = ModelManifest.load(model)
    assert manifest.language_model == "ngrams.npz"
    assert manifest.files_sha256["ngrams.npz"] == file_sha256(model / "ngrams.npz")
    info = manifest.extra["language_model_info"]
    assert (info["order"], info["min_count"]) == (3, 1)
    assert info["sources"] == ["en.toy.txt.gz", "toy.train.detok.tgt"]
    shipped = NgramModel.load(model / "ngrams.npz")
    expected = count_ngrams([CORPUS, CORPUS], order=3, min_count=1)  # the corpus is in each source once
    assert info["tokens"] == shipped.total == expected.total
    assert info["entries"] == {str(n): len(expected.tables.table(n)[0]) for n in range(1, expected.order + 1)}
    for n in range(1, expected.order + 1):
        assert all(map(np.array_equal, shipped.tables.table(n), expected.tables.table(n)))
    assert shipped.counts(["<s>", "i", "saw", "a"])[2, 3] == 2  # "i saw a", once per source
