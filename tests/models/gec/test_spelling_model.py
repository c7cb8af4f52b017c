"""The spelling ranking: counted from the training targets and mono data, learners' edits from the training pairs,
shipped beside the model and named in its manifest."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from models.gec.spelling_model import misspellings
from service.engine.manifest import ModelManifest, file_sha256
from service.text.ranking import Ranker
from service.text.word_pairs import START
from tests.conftest import FIXTURE_MODEL, copy_with_vocabulary


def test_learners_misspellings_are_unknown_words_replaced_by_a_close_word() -> None:
    known = Counter({"the": 50, "letter": 50, "i": 50, "received": 50, "cat": 50, "dog": 50, "teh": 10})
    pairs = [
        ("I recieved teh letter, the cat and the dgo.", "I received the letter, the cat and the dog."),
        ("My cat saw the dgo.", "My dog saw the dog."),  # "cat" -> "dog": a known word, and no misspelling
        ("I recieved it.", "I got it."),  # "recieved" -> "got": not a plausible correction
        ("I recieved it.", "I received it."),
    ]
    # "teh" is known here (seen 10 times), as the vocabulary would know it
    assert misspellings(pairs, known) == Counter({("recieved", "received"): 2, ("dgo", "dog"): 2})


def test_the_ranking_is_shipped_and_named_in_the_manifest(tmp_path: Path) -> None:
    model = copy_with_vocabulary(FIXTURE_MODEL, tmp_path / "model", "The owl saw the owl. An owl!")
    manifest = ModelManifest.load(model)
    assert manifest.spelling_model == "spelling.npz"
    assert manifest.files_sha256["spelling.npz"] == file_sha256(model / "spelling.npz")
    assert manifest.files_sha256["vocabulary.txt"] == file_sha256(model / "vocabulary.txt")  # the others stay
    info = manifest.extra["spelling_model_info"]
    assert info["min_count"] == 1 and info["sources"] == ["toy.train.detok.tgt", "en.toy.txt.gz"]
    pairs = Ranker.load(model / "spelling.npz").pairs
    # each sentence line counted with its markers, over both sources
    assert (pairs.count("owl"), pairs.count("the", "owl"), pairs.count(START, "the")) == (6, 4, 2)
    assert pairs.total == info["words_counted"] == 2 * 9  # 7 words and 2 markers in each source
    assert info["words_and_pairs"] == len(pairs.keys) and info["learner_misspellings"] == 0
