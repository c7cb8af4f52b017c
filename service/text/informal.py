"""Words of informal writing that the spelling stage leaves as typed: chat abbreviations and slang ("lol", "btw",
"thx", "idk") and words drawn out for emphasis ("sooo", "yesss", "pleeease").

SymSpell read them as the closest known words ("lol": "lot", "omg": "mg", "sooo": "soon", "pls": "plc", "btw": "bt",
"idk": a word the model then rewrote as "Finally,"), and the model, reading those, dropped or rewrote more ("thx",
"imo" went). A writer who types them means them; precision first, they are left alone (the model still reads them).
"""

from __future__ import annotations

import re

__all__ = ["CHAT_WORDS", "informal"]

_CHAT = """
lol lols lmao lmfao rofl omg omfg btw imo imho idk idc tbh smh fyi brb ttyl ttys nvm ikr afaik irl thx tnx thnx pls
plz tho thru gonna wanna gotta kinda sorta dunno gimme lemme cuz coz yeah yep yup nope nah okay hmm haha hehe lmk wtf
ffs bff ppl msg txt pic pics vid vids convo bday sry srsly prob probs obvi totes legit yolo fomo tmi tldr wbu hbu wyd
ily ilysm xoxo xox ayy aww ugh meh welp yay woah whoa oops oopsie eww mkay ofc ngl istg tysm tyvm cya jic atm ooh ahh
"""
CHAT_WORDS = frozenset(_CHAT.split())
_DRAWN_OUT = re.compile(r"([a-z])\1\1")  # no English word has a letter three times in a row


def informal(word: str) -> bool:
    """Whether the lowercase ``word`` is a chat word or drawn out for emphasis."""
    return word in CHAT_WORDS or _DRAWN_OUT.search(word) is not None
