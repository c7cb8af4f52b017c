"""The simulated editor: paragraphs typed a sentence at a time, revised by one small change, cache-busting."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from bench.served.editor import Editor, detokenize, learner_sentences, make_typo

CORPUS = [f"Sentence number {k} is about something interesting." for k in range(40)]


def test_a_paragraph_grows_a_sentence_a_send_then_changes_one_sentence_a_resend() -> None:
    editor = Editor(CORPUS, random.Random(3), max_sentences=4, revisions=3)
    sends = [re.split(r"(?<=\.) ", editor.next_text()) for _ in range(200)]
    grew = changed = 0
    for before, after in itertools.pairwise(sends):
        if len(after) == len(before) + 1:
            grew += 1
            assert after[:-1] == before
        elif len(after) == len(before) and after != before:
            changed += 1
            assert sum(a != b for a, b in zip(before, after, strict=True)) == 1
    assert grew > 20 and changed > 20
    assert all(1 <= len(s) <= 4 for s in sends)


def test_without_cache_busting_resends_repeat_sentences_and_with_it_none_repeats() -> None:
    def sentences(bust: bool) -> list[str]:
        editor = Editor(CORPUS, random.Random(5), max_sentences=5, cache_bust=bust)
        return [s for _ in range(100) for s in re.split(r"(?<=\.) ", editor.next_text())]

    plain, busted = sentences(False), sentences(True)
    assert len(set(plain)) < len(plain) / 2
    assert len(set(busted)) == len(busted)


def test_the_same_seed_gives_the_same_sends() -> None:
    first, second = (Editor(CORPUS, random.Random(9)) for _ in range(2))
    assert [first.next_text() for _ in range(50)] == [second.next_text() for _ in range(50)]


def test_a_typo_swaps_two_inner_letters_of_one_word() -> None:
    sentence = "We visited a wonderful island."
    typos = {make_typo(sentence, random.Random(k)) for k in range(50)}
    assert len(typos) > 3
    for typo in typos:
        assert sorted(typo) == sorted(sentence) and len(typo) == len(sentence)
        assert sum(a != b for a, b in zip(typo, sentence, strict=True)) in (0, 2)
    assert make_typo("I am ok.", random.Random(0)) == "I am ok."


def test_learner_text_is_read_and_tokenized_files_detokenized(tmp_path) -> None:
    (tmp_path / "a.detok.src").write_text("I has a idea .\n\nShe go home.\n")
    (tmp_path / "b.src").write_text("We ca n't live , if ( old ) people do n't find it .\n")
    lines = learner_sentences([tmp_path / "a.detok.src", tmp_path / "b.src"])
    assert lines == ["I has a idea .", "She go home.", "We can't live, if (old) people don't find it."]
    assert detokenize("It 's 5 % .") == "It's 5%."
    with pytest.raises(ValueError):
        learner_sentences([])
