"""A codec of one token per character, for unit tests that reason about token counts."""

from __future__ import annotations


class CharCodec:
    """``encode`` and ``token_ends`` as ``service.text.units.plan_units`` needs them."""

    @staticmethod
    def encode(text: str) -> list[int]:
        return [ord(c) for c in text]

    @staticmethod
    def token_ends(text: str) -> list[int]:
        return list(range(1, len(text) + 1))


CHARS = CharCodec()
