"""Memory after load: what a burst of large batches used goes back once decoding is idle."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from tests.api.server import start_server

pytestmark = [pytest.mark.slow, pytest.mark.server]

SENTENCE = (
    "My friend my friend bought a umbrella and the cat likes teh old car that we saw in a island last week with Tom."
)
TEXT = " ".join([SENTENCE] * 40)


async def _post_all(url: str, payloads: list[dict]) -> list[int]:
    async with httpx.AsyncClient(timeout=60) as client:
        return [r.status_code for r in await asyncio.gather(*(client.post(url, json=p) for p in payloads))]


def test_memory_goes_back_once_decoding_is_idle(tmp_path) -> None:
    """Four 40-sentence generations with 16 beams (512-row batches) grow the server by 60-115 MB;
    within seconds of the last answer it is back within 40 MB of where it started (5-6 MB measured;
    malloc may keep up to 32 MB at the top of a thread's heap). Before the fix, 60-115 MB stayed."""
    # every request decoded, none refused, in batches as big as a GPU's
    server = start_server(tmp_path, cache_size=0, admit_within=0, max_batch_size=32)
    try:
        ready, _ = server.memory_mb()
        payload = {"text": TEXT, "strategy": "beam", "num_beams": 16, "num_return_sequences": 8}
        assert asyncio.run(_post_all(server.url + "/v1/generate", [payload] * 4)) == [200] * 4
        loaded, _ = server.memory_mb()
        assert loaded > ready + 50, "the burst did not grow the server: this test would show nothing"
        deadline = time.monotonic() + 20
        while server.memory_mb()[0] > ready + 40:
            assert time.monotonic() < deadline, f"RSS {server.memory_mb()[0]:.0f} MB, ready {ready:.0f} MB"
            time.sleep(0.25)
    finally:
        assert server.stop() == 0
