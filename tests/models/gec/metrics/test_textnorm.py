"""Tests for JFLEG-style tokenisation and detokenisation."""

from __future__ import annotations

import pytest

from models.gec.metrics.textnorm import detokenize, tokenize

# JFLEG dev lines (sources and references), most of them ones plain sacremoses gets wrong.
ROUND_TRIP_LINES = [
    "So I think we can not live if old people could not find siences and tecnologies and they did not developped .",
    "One person if do n't have good health that means so many things they could lost .",
    "These kind of fish ca n't live so long in water that contain salt .",
    "The purpose of traveling is using a lot of your time to release your mind , is n't it ?",
    "We have to know this problem it 's serious but almost people doens't know about this .",
    "Newer vehicles are something could fly the sky , then we need't annoy about trafic jams .",
    "Futhermore , a tour guide will also provide safety and security for the travel , since they "
    "know already the do 's and don'ts in the tour .",
    "He/she wants to know everything about the universe , God , death , etc. ; these are concepts "
    "that encourage a lot of ideas , but the facts have not been found yet .",
    "On the other hand , he /she can continue doing what they do well and hope to be noticed .",
    "The scraping will causes heat and that heat(energy) will go into the car .",
    "4:they have a big chance to prepare for their future life",
    "Not only this,but without a clear understanding of what is being taught , the student would "
    "not be able to perform well on the tests .",
    'Some people might say"hey how does energy come " .',
    "This is how we are transforming our society in the present day. The consequence of "
    "disagreeing with this statement is that we are looking at what we want in the moment in "
    "order to have a great time .",
    "this will the proof of speeding offense so that polices can easily catch them. .",
    "However , after I learned all aspects of a company such as marketing , accounting , "
    "leadership , financial accounting , and business communication etc. .",
    "They tend to restrict traffic in certain days , hours , increasing parking fees , etc .",
    "This shows that people are aware of the disadvantages of getting old &raspsquo; among them "
    "getting less pleasure from life , and try to delay or disguise it in any possible way .",
    "But they are not examples for the whole &raspsquo; &raspsquo; young people community '' ...",
    "When the forest is caught on fire , the wood turns into ashes __ which is potassium .",
    'And I heard , " Success attracts success and money attracts money . "',
    "But that is a different situation , because at this stage , the graduate will have already "
    "guaranteed his/her bachelors ' degree .",
    "Besides , young people uaually like new-fasion thing , like ipod or mp 3 , I can see that "
    "main part of young peole ca n't live happily without music in their ear and movies at home .",
    "I 'm sure they 're right , but I 've heard you 'll say I 'd better not .",
]


@pytest.mark.parametrize("line", ROUND_TRIP_LINES)
def test_round_trip(line: str) -> None:
    assert tokenize(detokenize(line)) == line.split()


@pytest.mark.parametrize(
    ("line", "natural"),
    [
        ("I do n't think so .", "I don't think so."),
        ("They ca n't and wo n't come .", "They can't and won't come."),
        ("It 's what I 'm saying , is n't it ?", "It's what I'm saying, isn't it?"),
        ('He said , " We are the victims . "', 'He said, "We are the victims."'),
        ("We can not live like this .", "We can not live like this."),
        ("fees , etc .", "fees, etc."),
        ("communication etc. .", "communication etc. ."),
        ("the heat ( energy ) goes", "the heat (energy) goes"),
        ("", ""),
    ],
)
def test_detokenize(line: str, natural: str) -> None:
    assert detokenize(line) == natural


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("I don't know.", "I do n't know ."),
        ("They can't and won't come!", "They ca n't and wo n't come !"),
        ("DON'T", "DO N'T"),
        ("It's what I'm saying, isn't it?", "It 's what I 'm saying , is n't it ?"),
        ("The students' books", "The students ' books"),
        ("the do's and don'ts at five o'clock", "the do 's and don'ts at five o'clock"),
        ("I don\u2019t like \u201cthis\u201d.", 'I do n\'t like " this " .'),
        ('She said "Yes."', 'She said " Yes . "'),
        ("I have 2 cats. They are nice.", "I have 2 cats. They are nice ."),
        ("He/she left at 10:30.", "He/she left at 10:30 ."),
        ("We cannot go.", "We cannot go ."),
        ("  spaced \t out  ", "spaced out"),
        ("", ""),
    ],
)
def test_tokenize(text: str, tokens: str) -> None:
    assert tokenize(text) == tokens.split()
