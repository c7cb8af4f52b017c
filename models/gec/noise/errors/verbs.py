"""Verb errors: subject-verb agreement ("he go"), verb form ("can goes", "has went") and tense."""

from __future__ import annotations

import random

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl
from models.gec.noise.errors.common import Tokens, choose, lower_at, recase
from models.gec.noise.errors.context import (
    content_verb_tags,
    is_content,
    is_infinitive_to,
    like_is_prep,
    subject_before,
)
from models.gec.noise.tokens import delete, insert, is_word, replace, sentence_start


def verb_sva(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Break subject-verb agreement ("he go", "people thinks", "there is many", "they was")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[int, str], float]] = []
    for i, t in enumerate(tokens):
        if t.edited or not is_word(t.text):
            continue
        low = t.text.lower()
        prev = lower_at(tokens, i - 1)
        if low in wl.AGREEMENT_SWAPS:
            new = wl.AGREEMENT_SWAPS[low]
            if low in ("have", "do", "don't", "haven't") and (
                subject_before(tokens, i, start) != "pl" or prev == "you"
            ):
                continue
            if low == "were" and prev in ("i", "he", "she", "it"):
                continue  # subjunctive "if I were" is fine either way
            if low == "am":
                new = "are" if rng.random() < 0.5 else "is"
            cands.append(((i, new), 1.0))
            continue
        if not is_content(low) and not (low == "like" and not like_is_prep(tokens, i)):
            continue
        if t.text[:1].isupper() and i != start:
            continue
        tags = infl.verb_tags(low) if low == "like" else content_verb_tags(low)
        if not tags:
            continue
        subj = subject_before(tokens, i, start)
        lemma = infl.verb_lemma(low)
        if lemma is None or lemma == "be":
            continue
        if "VBZ" in tags and subj == "sg":
            cands.append(((i, lemma), 1.5))
        elif "VB" in tags and subj == "pl" and prev not in wl.MODALS:
            cands.append(((i, infl.third_person(lemma)), 1.0))
    if not cands:
        return None
    i, new = choose(rng, cands)
    return replace(tokens, i, recase(tokens, i, new, start))


def verb_form(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Use the wrong verb form ("can goes", "want go", "enjoy to swim", "has went", "is play")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[str, int], float]] = []
    for i, t in enumerate(tokens):
        if t.edited or not t.text.isalpha() or i == 0:
            continue
        low = t.text.lower()
        if not is_content(low) and low not in ("be", "have", "do", "go", "get", "being"):
            continue
        tags = content_verb_tags(low)
        if not tags:
            continue
        prev = lower_at(tokens, i - 1)
        j = i - 1
        if prev in wl.FREQ_ADVERBS:
            j -= 1
            prev = lower_at(tokens, j)
        if j < 0 or tokens[j].edited:
            continue
        if prev in wl.MODALS and "VB" in tags:
            cands.append((("modal", i), 1.5))
        elif prev == "to" and "VB" in tags and is_infinitive_to(tokens, j):
            cands.append((("to", i), 1.5))
        elif "VBG" in tags and prev in wl.ING_PREPOSITIONS and not infl.is_noun(low):
            cands.append((("prep_ing", i), 1.0))
        elif "VBG" in tags and infl.verb_lemma(prev) in wl.GERUND_VERBS:
            cands.append((("gerund_verb", i), 1.5))
        elif "VBN" in tags and prev in wl.HAVE_FORMS | {"'ve", "haven't", "hasn't", "hadn't"}:
            cands.append((("perfect", i), 1.0))
        elif "VBG" in tags and prev in wl.BE_FORMS - {"being", "be"}:
            cands.append((("progressive", i), 1.0))
        elif "VBN" in tags and prev in wl.BE_FORMS and "VB" not in tags:
            cands.append((("passive", i), 0.7))
        elif "VB" in tags and j >= 1 and lower_at(tokens, j - 1) in wl.CAUSATIVE_FORMS and (prev in wl.OBJECT_PRONOUNS):
            cands.append((("causative", i), 1.5))
    if not cands:
        return None
    kind, i = choose(rng, cands)
    low = tokens[i].text.lower()
    lemma = infl.verb_lemma(low)
    if lemma is None:
        return None
    if kind == "modal":
        form = choose(rng, [("to", 0.35), ("VBG", 0.25), ("VBZ", 0.25), ("VBD", 0.15)])
        if form == "to":
            return insert(tokens, i, "to")
        new = infl.inflect_verb(lemma, form)
    elif kind == "to":
        form = choose(rng, [("drop", 0.4), ("VBG", 0.45), ("VBD", 0.15)])
        to_i = i - 1 if lower_at(tokens, i - 1) == "to" else i - 2
        before = lower_at(tokens, to_i - 1)
        if form == "drop":
            if infl.is_verb(before) and not tokens[to_i].edited:
                return delete(tokens, to_i)
            form = "VBG"
        new = infl.inflect_verb(lemma, form)
    elif kind == "prep_ing":
        new = lemma
    elif kind == "gerund_verb":
        if rng.random() < 0.7:
            out = replace(tokens, i, lemma)
            return insert(out, i, "to")
        new = lemma
    elif kind == "perfect":
        vbd = infl.past(lemma)
        new = vbd if vbd != infl.participle(lemma) and rng.random() < 0.6 else lemma
    elif kind == "progressive":
        new = lemma
    elif kind == "passive":
        vbd = infl.past(lemma)
        new = vbd if vbd != low and rng.random() < 0.5 else lemma
    else:  # causative
        return insert(tokens, i, "to")
    if new == low:
        return None
    return replace(tokens, i, recase(tokens, i, new, start))


def verb_tense(tokens: Tokens, rng: random.Random) -> Tokens | None:
    """Use the wrong tense ("I go there yesterday", "can" for "could", "I have seen him last
    week", "he been there")."""
    start = sentence_start(tokens)
    cands: list[tuple[tuple[str, int], float]] = []
    for i, t in enumerate(tokens):
        if t.edited or not is_word(t.text):
            continue
        low = t.text.lower()
        nxt = lower_at(tokens, i + 1)
        nxt_tags = infl.verb_tags(nxt) if nxt.isalpha() else frozenset()
        if low in wl.TENSE_SWAPS or low in wl.DROPPABLE_AUXILIARIES:
            if low in wl.TENSE_SWAPS and (low != "had" or "VBN" in nxt_tags):
                # "had" only as the auxiliary: "had gone" -> "have gone"
                cands.append((("swap", i), wl.TENSE_SWAP_WEIGHTS.get(low, 0.8)))
            nxt_free = i + 1 < len(tokens) and not tokens[i + 1].edited
            if low in wl.DROPPABLE_AUXILIARIES and i != start and nxt_free and (nxt_tags & {"VB", "VBN", "VBG"}):
                cands.append((("drop_aux", i), 0.5))  # "I been there", "he going"
            if low in ("has", "have") and "VBN" in nxt_tags and nxt_free:
                cands.append((("perfect_to_past", i), 0.7))
            continue
        if not is_content(low) and not (low == "like" and not like_is_prep(tokens, i)):
            continue
        if t.text[:1].isupper() and i != start:
            continue
        tags = content_verb_tags(low)
        if not tags:
            continue
        subj = subject_before(tokens, i, start)
        if subj is None:
            continue
        if "VBD" in tags:
            cands.append((("past_to_present", i), 1.0))
            if subj and lower_at(tokens, i - 1) in wl.SUBJECT_PRONOUNS:
                cands.append((("past_to_perfect", i), 0.3))
        elif "VBZ" in tags or ("VB" in tags and subj == "pl"):
            cands.append((("present_to_past", i), 0.8))
    if not cands:
        return None
    kind, i = choose(rng, cands)
    low = tokens[i].text.lower()
    if kind == "swap":
        new = choose(rng, wl.TENSE_SWAPS[low])
        if low == "had":
            new = "has" if subject_before(tokens, i, start) == "sg" else "have"
        elif low == "did" and subject_before(tokens, i, start) == "sg":
            new = "does"
        return replace(tokens, i, recase(tokens, i, new, start))
    if kind == "drop_aux":
        return delete(tokens, i)
    if kind == "perfect_to_past":
        lemma = infl.verb_lemma(tokens[i + 1].text.lower())
        if lemma is None:
            return None
        out = replace(tokens, i + 1, infl.past(lemma))
        return delete(out, i, mark_next=False)
    lemma = infl.verb_lemma(low)
    if lemma is None or lemma == "be":
        return None
    subj = subject_before(tokens, i, start)
    if kind == "past_to_present":
        new = infl.third_person(lemma) if subj == "sg" else lemma
    elif kind == "present_to_past":
        new = infl.past(lemma)
    else:  # past_to_perfect: "I saw" -> "I have seen"
        aux = "has" if lower_at(tokens, i - 1) in ("he", "she", "it") else "have"
        out = replace(tokens, i, infl.participle(lemma))
        return insert(out, i, aux)
    if new == low:
        return None
    return replace(tokens, i, recase(tokens, i, new, start))
