"""The sentence cache: identical sentences (same model version and decoding settings) are decoded once.

``SentenceCache`` is the interface; ``MemoryCache`` is the in-process LRU. A Redis
implementation of the same interface comes with the scale-out work.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol


class SentenceCache(Protocol):
    async def get_many(self, keys: Sequence[str]) -> list[str | None]: ...

    async def set_many(self, items: Sequence[tuple[str, str]]) -> None: ...


class MemoryCache:
    """A bounded least-recently-used map (``capacity`` 0 disables it)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        found: list[str | None] = []
        for key in keys:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            found.append(value)
        return found

    async def set_many(self, items: Sequence[tuple[str, str]]) -> None:
        if self.capacity <= 0:
            return
        for key, value in items:
            self._items[key] = value
            self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)


def cache_key(model: str, version: str, arm: str, sentence: str) -> str:
    return f"{model}\x1f{version}\x1f{arm}\x1f{sentence}"
