"""The rule stage: each kind fixes its errors and leaves correct English alone, and its edits merge with the model's
(one edit where both make it, the model's where it changes what a rule read, never two overlapping)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text.confidence import FEATURES, ConfidenceModel
from service.text.edits import Edit, apply_edits
from service.text.grammar_rules import RULE_KINDS, find_rule_edits
from service.text.units import Scoring, assemble, plan_units
from tests.text.char_codec import CHARS


def _fixed(text: str) -> tuple[str, list[str]]:
    edits = find_rule_edits(text)
    return apply_edits(text, [Edit(e.start, e.end, e.original, e.replacement) for e in edits]), [e.kind for e in edits]


FIXES = [
    ("I went to the the cinema yesterday.", "I went to the cinema yesterday.", "repeated"),
    ("I bought a umbrella yesterday.", "I bought an umbrella yesterday.", "a_an"),
    ("It was a error to leave.", "It was an error to leave.", "a_an"),  # "error": a mass noun too
    ("She is an very good teacher.", "She is a very good teacher.", "a_an"),
    ("We waited for a hour.", "We waited for an hour.", "a_an"),  # the sound, not the letter
    ("It was a honest mistake.", "It was an honest mistake.", "a_an"),
    ("He has an usual job.", "He has a usual job.", "a_an"),
    ("She gave it to to her mother.", "She gave it to her mother.", "repeated"),
    ("The the the cat sat.", "The cat sat.", "repeated"),  # a run of repeats: one edit
    ("my name is Anna and I live in Madrid.", "My name is Anna and I live in Madrid.", "capital"),
    ("We was late for the meeting.", "We were late for the meeting.", "agreement"),
    ("My brother don't like vegetables.", "My brother doesn't like vegetables.", "agreement"),
    ("He have two cats at home.", "He has two cats at home.", "agreement"),
    ("They has a big garden.", "They have a big garden.", "agreement"),
    ("There is many people in the park.", "There are many people in the park.", "agreement"),
    ("She can sings very well.", "She can sing very well.", "bare_verb"),
    ("I didn't went to school.", "I didn't go to school.", "bare_verb"),
    ("He must finishes his work first.", "He must finish his work first.", "bare_verb"),  # "finishes": also a noun
    ("Did you went there last week?", "Did you go there last week?", "bare_verb"),
    ("He doesn't likes fish.", "He doesn't like fish.", "bare_verb"),
    ("Thank you for the informations.", "Thank you for the information.", "uncountable"),
    ("She gave me some advices.", "She gave me some advice.", "uncountable"),
    ("I have two new chair in my room.", "I have two new chairs in my room.", "plural"),
    ("There are many book on the shelf.", "There are many books on the shelf.", "plural"),
    ("My sister is more taller than me.", "My sister is taller than me.", "comparative"),
    ("It is the most cheapest hotel.", "It is the cheapest hotel.", "comparative"),
    ("She like to play tennis.", "She likes to play tennis.", "agreement"),  # "like": an adjective too
    ("I know it, but it work slowly.", "I know it, but it works slowly.", "agreement"),  # "work": a noun too
    ("If I will see him, I will tell him.", "If I see him, I will tell him.", "conditional"),
    ("If it will rain, we will stay home.", "If it rains, we will stay home.", "conditional"),
    ("We will go, and if she will be late, we wait.", "We will go, and if she is late, we wait.", "conditional"),
    ("Their going to visit us next week.", "They're going to visit us next week.", "there_their"),
    ("Your welcome to stay with us.", "You're welcome to stay with us.", "there_their"),
    ("Your welcome!", "You're welcome!", "there_their"),
    ("I like there new house very much.", "I like their new house very much.", "there_their"),
    ("Did you saw him?", "Did you see him?", "bare_verb"),  # "saw": also the bare form of a rare verb
    ("I didn't saw the film.", "I didn't see the film.", "bare_verb"),
    ("Did you fell down the stairs?", "Did you fall down the stairs?", "bare_verb"),
    ("Where did you went yesterday?", "Where did you go yesterday?", "bare_verb"),  # after a question word
    ("Can you explain me the problem?", "Can you explain to me the problem?", "explain_to"),
    ("She explained him the rules of the game.", "She explained to him the rules of the game.", "explain_to"),
    ("Could you explain us why it was closed?", "Could you explain to us why it was closed?", "explain_to"),
    ("He explained her that he was leaving.", "He explained to her that he was leaving.", "explain_to"),
    ("He suggested me to go to the doctor.", "He suggested that I go to the doctor.", "suggest_that"),
    ("They suggest him to apply early.", "They suggest that he apply early.", "suggest_that"),
    ("I look forward to hear from you.", "I look forward to hearing from you.", "look_forward"),
    ("I'm looking forward to see you soon.", "I'm looking forward to seeing you soon.", "look_forward"),
    ("We looked forward to meet them.", "We looked forward to meeting them.", "look_forward"),  # "meet": a noun too
    ("She looks forward to be there.", "She looks forward to being there.", "look_forward"),
    ("I am agree with you.", "I agree with you.", "be_agree"),
    ("I'm agree with you.", "I agree with you.", "be_agree"),
    ("He is agree with me.", "He agrees with me.", "be_agree"),
    ("Some people are not agree with it.", "Some people do not agree with it.", "be_agree"),
    ("She's not agree with us.", "She does not agree with us.", "be_agree"),
    ("Yesterday I go to the park.", "Yesterday I went to the park.", "past_time"),
    ("Last week we visit our grandmother.", "Last week we visited our grandmother.", "past_time"),
    ("Yesterday, she buys a car.", "Yesterday, she bought a car.", "past_time"),  # not the agreement's "buys"
    ("Two days ago I meet him.", "Two days ago I met him.", "past_time"),
    ("3 years ago they move here.", "3 years ago they moved here.", "past_time"),
    ("I ate a egg.", "I ate an egg.", "a_an"),  # a noun that is also a verb ("to egg on")
    ("My father don't work on Sundays.", "My father doesn't work on Sundays.", "agreement"),  # "to father"
    ("The most easiest way is this.", "The easiest way is this.", "comparative"),  # "easiest": also an adverb
    ("There is a lot of people here.", "There are a lot of people here.", "agreement"),
    ("There was lots of cars.", "There were lots of cars.", "agreement"),
    ("There are a big problem with it.", "There is a big problem with it.", "agreement"),
    ("Did you left early?", "Did you leave early?", "bare_verb"),  # "left": an adjective and a noun too
    ("I didn't wanted to go.", "I didn't want to go.", "bare_verb"),  # "wanted": an adjective too, "to" after it
    ("He didn't told me.", "He didn't tell me.", "bare_verb"),  # a past that is also the participle
    ("Did he knows the way?", "Did he know the way?", "bare_verb"),
    ("I don't wants it.", "I don't want it.", "bare_verb"),
    ("Do you knows him?", "Do you know him?", "bare_verb"),
    ("Why do they likes it?", "Why do they like it?", "bare_verb"),
    ("Your very kind.", "You're very kind.", "there_their"),  # "kind": a noun too, after an intensifier
    ("Your right!", "You're right!", "there_their"),  # a noun too, "your" opening the sentence
    ("Thank you, your so lucky.", "Thank you, you're so lucky.", "there_their"),
    ("I have five more chair.", "I have five more chairs.", "plural"),
    ("We met three other student in the hall.", "We met three other students in the hall.", "plural"),
    ("The buses don't stops here.", "The buses don't stop here.", "bare_verb"),  # "stops": a noun too, after a subject
]


@pytest.mark.parametrize(("source", "corrected", "kind"), FIXES)
def test_each_kind_fixes_its_errors(source: str, corrected: str, kind: str) -> None:
    assert _fixed(source) == (corrected, [kind])


CORRECT = [
    "He was looked for for many years.",  # a preposition and a particle
    "What it is is a question of time.",
    "Will drinks be served after the talk?",  # "will" opens a question: "drinks" is a noun
    "We bought a can of beans and a saw.",
    "They did well, and all you do becomes easier.",  # "do" as the main verb
    "She has a two year old daughter.",  # a compound before a noun
    "Many thanks for the two reports.",
    "Several people came, and more than ten left.",
    "He said that he have to go, and he left.",  # about the past: "had", not "has"
    "The pronoun we was used twice in the text.",  # "we" is no subject here
    "If I were you, I would ask.",
    "It was the most beautiful view, and far more interesting.",
    "THE PLAN IS THAT YOU CAN GOES.",  # capitals: left alone
    "iPhone sales grew in the quarter.",  # a name in lowercase
    "yours sincerely",  # too short to be a sentence
    "The information and the advice were useful.",
    "An hour later, a user opened a URL in an SQL shell.",
    "A one-off payment was made to an MBA student.",
    "It is a unique chance for a European team.",  # the sound, not the letter
    "We enacted an historic act in an hotel.",  # "an" before "h": both are written
    "A dict backed by an mmapped file.",  # a word the lexicon does not know
    "He got a grade A and a plan B in the letter a section.",  # letters
    "There was a another actor, a enough space and a apples.",  # no article, or another fix
    "I was mad an hungry, an so on.",  # "an" typed for "and"
    "A I said, a few people came.",
    "He still works there, and it even helps.",  # adverbs that are also verbs
    "He cut the bread, and it cost a lot.",  # a past tense written like the present
    "I insisted that he go home, so he went.",  # about the past
    "If he stamp not his image on them, he leaves his mark.",  # an archaic negation
    "Does she like it? Let it go, and make it work.",  # no clause's subject before the verb
    "I wonder if he will come, and ask if it will rain.",  # "if" after a verb: a question, not a condition
    "If you will follow me, the room is ready.",  # "if you will": a polite request
    "Their leaving upset me, and your coming helped.",  # a gerund as the subject
    "Thank you for your welcome to the team.",
    "Is there new evidence? We stayed there all day.",
    "Did you found the company? Did you lay the table? Did it bore you?",  # verbs of their own: to found, lay, bore
    "They did not weed the garden, and we bought a saw.",  # "weed": more common than "wee", whose past it is
    "You cannot explain me away, and the doctor explained him to me.",  # the pronoun is what is explained
    "She started to explain her project, and we always explained them.",  # "her": a possessive; "them": the things
    "Can you explain the meaning to me?",
    "Some sources suggested him to be the author.",  # "suggest" as "put forward"
    "He suggested to me that we leave, and she suggested it to them.",
    "I look forward to it, and to your reply, and to the work.",  # "to" a noun phrase
    "We must look forward to see if the trend holds.",  # to look ahead, to see
    "I am looking forward to hearing from you.",
    "I agree, we agreed, and it is agreed. Let's agree. Is agree a verb?",
    "She is married with two children.",
    "Yesterday I was ill, and yesterday is gone.",  # "be"; "yesterday" not opening the sentence
    "Yesterday I put it there.",  # a past form written like the present
    "Last week we have been busy.",  # "have"
    "Last of all we go home.",  # no past time
    "Two days later we leave.",
    "Yesterday, she said that she likes it.",  # the present in reported speech
    "There is a lot of water, there was lots of news and there is a lot of data.",  # not plural
    "There are a few cars, there are a number of them and there are a great many.",  # a count of many
    "There are a man and a woman, and there are a Sir John and a Lady Ann.",  # both; a name
    "If there were a train, there would be a lot of people.",  # a wish
    'A few "don\'t worries" were heard. "And don\'t victuals spring up?" he asked.',  # a noun; a question's subject
    "Your right to vote is yours. Your choice. Your dear friend, Anna.",  # a noun
    "We spoke of you and your capital, that is, your objective.",  # a noun too, "your" not opening the sentence
    "He met ten other city and police officials, and many other of his friends.",  # a modifier; "other" a pronoun
    "They didn't used to touch things up!",  # "used to": written so as often as "use to"
    "The left did not, and the right did. Did you read it? I did hope so, and do tell me.",
]


@pytest.mark.parametrize("text", CORRECT)
def test_correct_english_is_left_alone(text: str) -> None:
    assert find_rule_edits(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "We discussed about the plan.",  # 14 of 16 training pairs' edits found: under the bar (docs/quality.md)
        "She is married with a man from Spain.",  # 3 of 4
        "I would like to emphasize on the fact.",  # the NUCLE references keep it as written about a third of the time
        "Three words that describe me are these.",  # "describe me": the person described
    ],
)
def test_the_verb_patterns_left_out_are_left_to_the_model(text: str) -> None:
    assert find_rule_edits(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I don't went there, and does she went too?",  # "don't go" or "didn't go": the tense is the writer's
        "I didn't interested in it. Did you tired?",  # a participle read as an adjective: a learner's "be"
    ],
)
def test_a_verb_after_do_whose_fix_the_rule_cannot_know_is_left_to_the_model(text: str) -> None:
    assert find_rule_edits(text) == []


def test_a_text_that_does_not_start_a_sentence_keeps_its_first_word() -> None:
    assert find_rule_edits("and then we went home to sleep.", starts_sentence=False) == []
    assert [e.kind for e in find_rule_edits("and then we went home to sleep.")] == ["capital"]
    assert find_rule_edits("ebay sold more phones this year.") == []  # a name the lexicon lacks


def test_every_kind_has_a_description_and_a_confidence_of_at_least_the_bar() -> None:
    for name, kind in RULE_KINDS.items():
        assert kind.name == name and kind.description and 0.9 <= kind.confidence <= 1.0


WORDS = st.sampled_from(
    [
        *("the", "the", "a", "an", "to", "I", "can", "sings", "didn't", "went", "two", "new", "chair", "many", "book"),
        *("more", "taller", "most", "cheapest", "informations", "advices", "and", ",", ".", "?", "she", "he", "did"),
        *("you", "we", "was", "have", "don't", "there", "is", "my", "brother", "cat", "run"),
        *("explain", "me", "him", "suggested", "look", "forward", "hear", "am", "I'm", "agree", "not", "saw", "why"),
    ]
)
SENTENCES = st.lists(WORDS, min_size=1, max_size=14).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(SENTENCES)
def test_rule_edits_are_sorted_disjoint_and_match_the_text(text: str) -> None:
    edits = find_rule_edits(text)
    assert all(text[e.start : e.end] == e.original for e in edits)
    assert all(a.end <= b.start and a.start < b.start for a, b in pairwise(edits))
    assert all(e.context[0] <= e.start and e.end <= e.context[1] for e in edits)


def _applied(paragraph: str, edits) -> str:
    return apply_edits(paragraph, [Edit(e.start, e.end, e.original, e.replacement) for e in edits])


@settings(max_examples=300, deadline=None)
@given(SENTENCES, st.data())
def test_rule_and_model_edits_merge_into_disjoint_edits_that_give_the_text(sentence: str, data) -> None:
    """Whatever the model outputs (the sentence, the rules' correction of it, or either with a word changed), the
    assembled edits never overlap, none is made twice, and applied they give the corrected text, whether the
    model's edits are kept or held back."""
    paragraph = sentence + "."
    units = plan_units(paragraph, CHARS, 1000)
    outputs = []
    for unit in units:
        ruled = _applied(unit.normalized.text, find_rule_edits(unit.normalized.text))
        words = data.draw(st.sampled_from([unit.normalized.text, ruled])).split(" ")
        if data.draw(st.booleans()):
            words[data.draw(st.integers(0, len(words) - 1))] = data.draw(WORDS)
        outputs.append(" ".join(words))
    doubtful = ConfidenceModel((-20.0,) + (0.0,) * (len(FEATURES) - 1))  # the model's edits held: the rules' stand
    for scoring in (Scoring(), Scoring(doubtful, threshold=0.3)):
        assembled = assemble(paragraph, units, outputs, scoring=scoring)
        edits = sorted(assembled.edits, key=lambda e: (e.start, e.end))
        assert all(a.end <= b.start and a.start < b.start for a, b in pairwise(edits))
        assert _applied(paragraph, edits) == assembled.text


def test_an_edit_both_make_is_one_edit_with_the_rule_s_confidence() -> None:
    paragraph = "She can sings very well."
    (unit,) = plan_units(paragraph, CHARS, 100)
    (edit,) = assemble(paragraph, [unit], ["She can sing very well."]).edits
    assert (edit.original, edit.replacement) == ("sings", "sing")
    assert edit.confidence >= RULE_KINDS["bare_verb"].confidence
    assert edit.category == "R:VERB:FORM" and edit.message


def test_the_rules_correct_what_the_model_leaves_and_yield_where_it_changes_what_they_read() -> None:
    paragraph = "She can sings and we have two new chair."
    (unit,) = plan_units(paragraph, CHARS, 100)
    alone = assemble(paragraph, [unit], [paragraph])
    assert alone.text == "She can sing and we have two new chairs."
    assert [e.category for e in alone.edits] == ["R:VERB:FORM", "R:NOUN:NUM"]
    model = assemble(paragraph, [unit], ["She can dance and we have two new chair."])  # the model rewrote "sings"
    assert model.text == "She can dance and we have two new chairs."


def test_agreement_stands_over_the_model_s_other_form_of_its_verb_and_yields_elsewhere() -> None:
    paragraph = "He go to school every day."
    (unit,) = plan_units(paragraph, CHARS, 100)
    tense = assemble(paragraph, [unit], ["He went to school every day."])  # the model's tense, with no past about
    assert tense.text == "He goes to school every day." and [e.replacement for e in tense.edits] == ["goes"]
    around = assemble(paragraph, [unit], ["They go to school every day."])  # the model changed what the rule read
    assert around.text == "They go to school every day."
    assert not RULE_KINDS["bare_verb"].over_model  # "She can dance" for "She can sings" stands (above)


def test_there_their_stands_over_the_model_s_other_word_of_the_set_and_yields_elsewhere() -> None:
    paragraph = "Their going to visit us next week."
    (unit,) = plan_units(paragraph, CHARS, 100)
    other = assemble(paragraph, [unit], ["There going to visit us next week."])  # version 5's edit
    assert other.text == "They're going to visit us next week." and [e.replacement for e in other.edits] == ["They're"]
    around = assemble(paragraph, [unit], ["Their trip to visit us next week."])  # the model changed what the rule read
    assert around.text == "Their trip to visit us next week."


def test_a_model_edit_the_threshold_holds_back_does_not_hold_back_the_rule_s_edit_it_overrode() -> None:
    paragraph = "I like there new house very much."
    (unit,) = plan_units(paragraph, CHARS, 100)
    model = ["I like there are a new house very much."]  # an edit where the rule read, which the threshold holds
    doubtful = ConfidenceModel((-20.0,) + (0.0,) * (len(FEATURES) - 1))  # the model's own edits: about 0
    held = assemble(paragraph, [unit], model, scoring=Scoring(doubtful, threshold=0.3))
    assert held.text == "I like their new house very much." and [e.replacement for e in held.held] == []
    shown = assemble(paragraph, [unit], model)  # no threshold: the model's edit stands, the rule's yields
    assert shown.text == model[0]


def test_two_rule_edits_in_one_sentence_both_stand() -> None:
    paragraph = "my brother don't like vegetables at all."
    units = plan_units(paragraph, CHARS, 100)
    assembled = assemble(paragraph, units, [u.normalized.text for u in units])
    assert assembled.text == "My brother doesn't like vegetables at all."


def test_rule_edits_respect_the_threshold_and_the_guard() -> None:
    paragraph = "Thank you for the informations."
    (unit,) = plan_units(paragraph, CHARS, 100)
    doubtful = ConfidenceModel((-20.0,) + (0.0,) * (len(FEATURES) - 1))  # the model's own edits: about 0
    for threshold in (0.22, 0.5):
        kept = assemble(paragraph, [unit], [paragraph], scoring=Scoring(doubtful, threshold=threshold))
        assert kept.text == "Thank you for the information."
        assert [e.confidence for e in kept.edits] == [RULE_KINDS["uncountable"].confidence]
    strict = assemble(paragraph, [unit], [paragraph], scoring=Scoring(doubtful, threshold=1.2))
    assert strict.text == paragraph and [e.replacement for e in strict.held] == ["information"]
    dropped = assemble(paragraph, [unit], ["!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"])
    assert dropped.dropped and dropped.text == "Thank you for the information."


def test_no_rule_edit_in_a_list_item_s_first_word_a_protected_span_or_another_language() -> None:
    for paragraph in ("- two new chair in the room", "Run `the the` to see.", "Ich habe zwei neue Stühle gekauft."):
        units = plan_units(paragraph, CHARS, 100, english=lambda text, spans: [False] * len(spans))
        assert assemble(paragraph, units, [u.normalized.text for u in units]).edits == []
    paragraph = "- my name is Anna and I live here."
    units = plan_units(paragraph, CHARS, 100)
    assert assemble(paragraph, units, [u.normalized.text for u in units]).text == paragraph


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_any_text_gives_edits_that_match_it(text: str) -> None:
    for edit in find_rule_edits(text):
        assert text[edit.start : edit.end] == edit.original and edit.original != edit.replacement
