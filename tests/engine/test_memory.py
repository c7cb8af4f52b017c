"""Memory a large batch used goes back: the sessions' arenas shrink, malloc returns its free pages."""

from __future__ import annotations

from pathlib import Path

from service.engine.allocator import configure_malloc, release_free_memory
from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import SENTENCES


def _rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return next(int(line.split()[1]) * 1024 / 1e6 for line in status.splitlines() if line.startswith("VmRSS:"))


def test_glibc_takes_the_fixed_thresholds() -> None:
    assert configure_malloc() is True  # mallopt refuses values it cannot take
    assert release_free_memory() is True


def test_release_memory_gives_back_what_the_arenas_kept_after_a_large_batch() -> None:
    engine = Engine(FIXTURE_MODEL, variant="int8")
    corrected = engine.correct(SENTENCES)
    sources = engine.codec.encode_batch([s for s in SENTENCES if s] * 8)
    engine.generate(sources, "beam", DecodeParams(num_beams=16, num_return_sequences=8))  # 1,024 rows
    release_free_memory()  # what malloc holds free goes first: what remains is held by the arenas
    kept = _rss_mb()
    engine.release_memory()
    release_free_memory()
    assert kept - _rss_mb() > 12, "the sessions' arenas still hold the batch's memory"
    assert engine.correct(SENTENCES) == corrected
