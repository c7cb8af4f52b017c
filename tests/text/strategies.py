"""Hypothesis strategies and literal learner examples shared by the text tests."""

from __future__ import annotations

from hypothesis import strategies as st

# Pairs copied from the FCE development set (source, corrected).
LEARNER_PAIRS = [
    (
        "With internet you can do whatever you want without going out home (shoping, speaking with a friend, "
        "working, putting your money aside....)",
        "With the Internet you can do whatever you want without going out (shopping, speaking with a friend, "
        "working, putting your money aside....)",
    ),
    (
        "So, I told Pat that Lynne was ugly, fat like a cow, and extremely agressive.",
        "So, I told Pat that Lynne was ugly, fat like a cow, and extremely aggressive.",
    ),
    (
        "We are all extremely excited especially because of the trip to Greenwich, the town we were always "
        "interested in.",
        "We are all extremely excited, especially because of the trip to Greenwich, the town we have always been "
        "interested in.",
    ),
    (
        "When there was a restful we went to the restaurant which was closed because it was late.",
        "When there was an intermission we went to the restaurant which was closed because it was late.",
    ),
    ("Look forward to hearing from you.", "I look forward to hearing from you."),
    (
        "Firstly, I have had no discount at paying. secondly there was delay which got me into trouble, After the "
        "show I couldn't catch my train.",
        "Firstly, I had no discount when I paid. Secondly there was a delay which got me into trouble. After the "
        "show I couldn't catch my train.",
    ),
    (
        "Secondly, the show started at 20:15 instead of 19:30, it's a theatre but not a concert hall!!!!",
        "Secondly, the show started at 20:15 instead of 19:30; it's a theatre, not a concert hall!!!!",
    ),
    (
        "Therefore I read Agatha Christie's ,,Best Detective Stories of Agatha Christie\".",
        'Therefore I read Agatha Christie\'s "Best Detective Stories of Agatha Christie".',
    ),
    (
        "Organize better your shows and do not exagerate with publicity!",
        "Organise your shows better and do not exaggerate with publicity!",
    ),
    (
        "I'd prefer staying in log cabins because I need a proper place to say and study .",
        "I'd prefer to stay in a log cabin because I need a proper place to stay and study in.",
    ),
    ("There is a storm and they can not leave.", "There is a storm and they cannot leave."),
    (
        "Secondly, the show started one hour fifteen past after.",
        "Secondly, the show started one hour and fifteen minutes late.",
    ),
    (
        "I have just recieved the letter, which lets me know that I have won the first prize.",
        "I have just received the letter, which lets me know that I have won the first prize.",
    ),
    ("I had ever never sit down there.", "I had never sat down there."),
]

# Pieces that stress offsets: astral emoji (with modifier, ZWJ sequence, flag), CJK, combining marks, odd spaces,
# zero-width and control characters, CRLF, tabs, repeated spaces, NFC singletons.
SPECIAL_PIECES = [
    " ",
    "  ",
    "\t",
    "\r\n",
    "\n",
    "\r",
    "\u2028",
    ".",
    ",",
    "!",
    "?",
    ";",
    "'",
    "\u2019",
    '"',
    "\u201c",
    "-",
    "\u00a0",
    "\u202f",
    "\u3000",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u00ad",
    "\x00",
    "\x07",
    "\u0301",
    "e\u0301",
    "\u212b",
    "\u00c5",
    "\U0001f600",
    "\U0001f44d\U0001f3fd",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f1eb\U0001f1f7",
    "\u65e5\u672c\u8a9e",
    "\u3002",
    "\U00020000",
]
WORDS = ["I", "the", "a", "go", "went", "school", "to", "cafe", "Mr", "don't", "it's", "3.50", "e.g"]

pieces = st.one_of(
    st.sampled_from(SPECIAL_PIECES),
    st.sampled_from(WORDS),
    st.characters(exclude_categories=("Cs",)),
)
texts = st.lists(pieces, max_size=25).map("".join)


@st.composite
def mutated_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """A random text and a copy with random piece-level insertions, deletions, replacements and swaps."""
    parts = draw(st.lists(pieces, max_size=25))
    edited = list(parts)
    for _ in range(draw(st.integers(0, 5))):
        op = draw(st.sampled_from(("insert", "delete", "replace", "swap")))
        position = draw(st.integers(0, len(edited)))
        if op == "insert":
            edited.insert(position, draw(pieces))
        elif edited and position < len(edited):
            if op == "delete":
                del edited[position]
            elif op == "replace":
                edited[position] = draw(pieces)
            elif position + 1 < len(edited):
                edited[position], edited[position + 1] = edited[position + 1], edited[position]
    return "".join(parts), "".join(edited)


pairs = st.one_of(st.tuples(texts, texts), mutated_pairs(), st.sampled_from(LEARNER_PAIRS))

# Characters that break text handling, each class drawn far more often than uniform Unicode would:
# lone surrogates (an editor's half-typed emoji, sent as JSON's \ud83d), combining marks, right-to-left
# script and bidi controls, zero-width and invisible characters, NUL and other controls, emoji ZWJ
# sequences (with skin tones, flags, keycaps), mixed line breaks, and special-token spellings.
HOSTILE_CLASSES = {
    "surrogate": st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    "combining": st.one_of(
        st.characters(min_codepoint=0x0300, max_codepoint=0x036F),
        st.sampled_from(["\u20d0", "\u20e3", "\u0489", "\u1ab0", "\ufe20", "e\u0301\u0302", "a\u0308\u0323"]),
    ),
    "rtl": st.one_of(
        st.characters(min_codepoint=0x0590, max_codepoint=0x06FF),
        st.sampled_from(["\u200e", "\u200f", "\u061c", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e"]),
        st.sampled_from(["\u2066", "\u2067", "\u2068", "\u2069", "שלום", "مرحبا", "\u202eevil\u202c"]),
    ),
    "zero_width": st.sampled_from(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u034f"]),
    "control": st.one_of(st.sampled_from(["\x00", "\x7f", "\x85", "\x0b", "\x0c"]), st.characters(max_codepoint=0x1F)),
    "emoji": st.sampled_from(
        [
            "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
            "\U0001f3f3\ufe0f\u200d\U0001f308",
            "\U0001f468\U0001f3fd\u200d\U0001f4bb",
            "\U0001f1ec\U0001f1e7",
            "1\ufe0f\u20e3",
            "\u2764\ufe0f",
            "\U0001f600",
            "\U0001f44d\U0001f3ff",
            "\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1",
        ]
    ),
    "line_break": st.sampled_from(["\r\n", "\n", "\r", "\r\r\n", "\n\r", "\u2028", "\u2029", "\r\n\r\n"]),
    "special_token": st.sampled_from(["</s>", "<s>", "<pad>", "<unk>", "<mask>"]),
    "words": st.sampled_from(["i", "saw", "a", "apple", "He", "go", "to", "school", "every", "days", "."]),
    "blank": st.sampled_from([" ", "  ", "\t", "\u00a0", "\u3000", ". ", ", ", "? "]),
    "any": st.characters(codec=None, categories=None),
}
hostile_pieces = st.one_of(*HOSTILE_CLASSES.values())
hostile_texts = st.lists(hostile_pieces, max_size=30).map("".join)
