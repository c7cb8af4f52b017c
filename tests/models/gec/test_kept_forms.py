"""The default model as served (spelling stage, keep bias, review) leaves each form the service keeps as written
exactly as written: Windows and UNC paths, emoticons with the blank before them, quotations in another language,
romanised sentences, markdown links' texts and list items' first words, while it still corrects the prose around
them."""

from __future__ import annotations

import pytest

from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_review, model_speller
from service.engine.runtime import RuntimeOptions
from tests.conftest import DEFAULT_MODEL
from tests.text import test_protect
from tests.text.test_language import ROMANISED

FRAME = "Yesterday he go home with {} and they was very happy."


@pytest.fixture(scope="module")
def correct() -> object:
    engine = Engine(DEFAULT_MODEL, options=RuntimeOptions(intra_op_threads=1))
    speller, review = model_speller(DEFAULT_MODEL), model_review(DEFAULT_MODEL)
    return lambda texts: [c.text for c in correct_texts(engine, texts, speller=speller, review=review)]


def kept(correct, forms: list[str], frame: str = FRAME) -> list[tuple[str, str]]:
    """The forms the model rewrote, with its correction of the frame they were put in (most frames corrected)."""
    texts = [frame.format(form) for form in forms]
    corrected = correct(texts)
    assert sum("he goes home" in text or "he went home" in text for text in corrected) > len(forms) / 2, corrected
    return [(form, text) for form, text in zip(forms, corrected, strict=True) if form not in text]


def test_windows_and_unc_paths(correct) -> None:
    assert kept(correct, test_protect.WINDOWS_PATHS) == []
    assert correct(["Please open C:\\Program Files\\App\\settings.ini and change the value."]) == [
        "Please open C:\\Program Files\\App\\settings.ini and change the value."
    ]


def test_emoticons_and_the_blank_before_them(correct) -> None:
    assert kept(correct, [f"them {emoticon}" for emoticon in test_protect.EMOTICONS]) == []
    glued = [f"them{emoticon}" for emoticon in test_protect.EYES_FIRST]
    assert kept(correct, glued) == []
    (text,) = correct(["I am so happy today :) and tomorrow :-) too ;) :D"])
    assert all(f" {emoticon}" in text for emoticon in (":)", ":-)", ";)", ":D")), text


def test_quotations_in_another_language(correct) -> None:
    quoted = [f"{left}{q}{right}" for q in test_protect.FOREIGN_QUOTATIONS for left, right in test_protect.QUOTES]
    assert kept(correct, quoted, "Yesterday he go home and said {} to them, and they was very happy.") == []


def test_romanised_sentences_are_left_whole(correct) -> None:
    paragraphs = [f"Yesterday he go home early. {sentence} They was very happy." for sentence in ROMANISED]
    for sentence, text in zip(ROMANISED, correct(paragraphs), strict=True):
        assert sentence in text and "They were" in text, text


def test_link_texts_and_list_items_first_words(correct) -> None:
    links = ["[the changelog](https://example.com/changes)", "[our docs](docs.html)", "[recieve it](x.html)"]
    assert kept(correct, links) == []
    items = [item.format(word) for item in test_protect.LIST_ITEMS for word in ("recieve", "Instal", "buyed")]
    texts = correct([f"{item} the milk and they was happy" for item in items])
    assert [(item, text) for item, text in zip(items, texts, strict=True) if not text.startswith(item)] == []
