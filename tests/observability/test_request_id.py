"""Request ids: which ids are kept, and the log filter that puts them on every line of a request."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import pytest

from service.observability.logging import configure_logging
from service.observability.request_id import accept_request_id, current_request_id, start_request


@pytest.mark.parametrize("given", ["0f8fad5b-d9cb-469f-a165-70867728950e", "req.1:a_b", "x" * 128, b"abc-123"])
def test_valid_ids_are_kept(given: str | bytes) -> None:
    assert accept_request_id(given) == (given.decode() if isinstance(given, bytes) else given)


@pytest.mark.parametrize("given", [None, "", "x" * 129, "a b", "a\nb", "<script>", "ä", b"\xff"])
def test_other_ids_are_replaced_by_new_ones(given: str | bytes | None) -> None:
    made = accept_request_id(given)
    assert made != given and len(made) == 32 and int(made, 16) >= 0
    assert accept_request_id(given) != made


def test_every_line_of_a_request_carries_its_id_and_only_its_own(root_logger: logging.Logger) -> None:
    stream = io.StringIO()
    handler = configure_logging("info", stream)
    log = logging.getLogger("gecserve.test")

    async def request(given: str) -> None:
        start_request(given)
        log.info("start")
        await asyncio.sleep(0.01)  # the other request runs meanwhile
        log.info("end", extra={"arm": "accelerated"})

    async def both() -> None:
        await asyncio.gather(request("req-a"), request("req-b"))

    asyncio.run(both())
    log.info("outside", extra={"request_id": "explicit"})
    handler.close()  # the writer thread has written every line queued
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert sorted((line["request_id"], line["msg"]) for line in lines[:-1]) == [
        ("req-a", "end"),
        ("req-a", "start"),
        ("req-b", "end"),
        ("req-b", "start"),
    ]
    assert lines[-1]["request_id"] == "explicit"
    assert current_request_id.get() is None  # the requests' tasks kept their ids to themselves
