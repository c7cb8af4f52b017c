"""Memory after load: what a burst of large batches used goes back once decoding is idle."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from service.engine.allocator import IDLE_S
from tests.system.clients import wait_for
from tests.system.server import start_server

pytestmark = [pytest.mark.slow, pytest.mark.server]

SENTENCE = (
    "My friend my friend bought a umbrella and the cat likes teh old car that we saw in a island last week with Tom."
)
TEXT = " ".join([SENTENCE] * 40)


async def _post_all(url: str, payloads: list[dict]) -> list[int]:
    async with httpx.AsyncClient(timeout=60) as client:
        return [r.status_code for r in await asyncio.gather(*(client.post(url, json=p) for p in payloads))]


def test_memory_goes_back_once_decoding_is_idle(tmp_path) -> None:
    """Four 40-sentence generations with 16 beams (512-row batches) grow the server by 60-100 MB; within seconds
    of the last answer it is back within 12 MB of where it was after one such generation of a sentence (3 MB
    measured). Before the idle release, 60-115 MB stayed; while each thread had a heap of its own, 22 MB (up to
    32 MB a heap: see ``service.engine.allocator``)."""
    # every request decoded, none refused, in batches as big as a GPU's
    server = start_server(tmp_path, cache_size=0, admit_within=0, max_batch_size=32)
    try:
        generate = {"text": SENTENCE, "strategy": "beam", "num_beams": 16, "num_return_sequences": 8}
        # what the first generation makes once (and keeps) is not what a burst used
        assert asyncio.run(_post_all(server.url + "/v1/generate", [generate])) == [200]
        time.sleep(2.5 * IDLE_S)  # the idle release has run at least once
        warm, _ = server.memory_mb()
        assert asyncio.run(_post_all(server.url + "/v1/generate", [generate | {"text": TEXT}] * 4)) == [200] * 4
        loaded, _ = server.memory_mb()
        assert loaded > warm + 50, "the burst did not grow the server: this test would show nothing"
        wait_for(lambda: server.memory_mb()[0] <= warm + 12, 20, every=0.25, what=f"RSS within 12 MB of {warm:.0f} MB")
    finally:
        assert server.stop() == 0
