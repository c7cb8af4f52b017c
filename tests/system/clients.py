"""Clients of the running test server, and checks written independently of the service's own code."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import httpx
from prometheus_client.parser import text_string_to_metric_families

from service.api.grpc.proto import gecserve_pb2_grpc as pb_grpc
from tests.waiting import wait_for as wait_for  # re-exported: the API tests wait with these
from tests.waiting import wait_until as wait_until


def post(server, path: str, payload: Any, **kwargs: Any) -> httpx.Response:
    return httpx.post(server.url + path, json=payload, timeout=60, **kwargs)


def grpc_call(server, method: str, request, metadata=None, timeout: float = 60):
    """One unary call; returns (reply, initial metadata as a dict)."""

    async def call():
        async with grpc.aio.insecure_channel(server.grpc_target) as channel:
            invocation = getattr(pb_grpc.CorrectorStub(channel), method)(request, timeout=timeout, metadata=metadata)
            reply = await invocation
            return reply, dict(await invocation.initial_metadata() or ())

    return asyncio.run(call())


def grpc_error(server, method: str, request, metadata=None, timeout: float = 60) -> grpc.aio.AioRpcError:
    try:
        grpc_call(server, method, request, metadata, timeout)
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the call succeeded")


def rebuild(text: str, edits: list[dict[str, Any]], unit: str) -> str:
    """``text`` with ``edits`` applied by their offsets in ``unit`` ("codepoint" or "utf16"), checking
    that each edit's ``original`` is what sits at its span. Not the service's ``apply_edits``."""
    if unit == "utf16":
        units = text.encode("utf-16-le", "surrogatepass")

        def cut(a: int, b: int) -> str:
            return units[2 * a : 2 * b].decode("utf-16-le", "surrogatepass")

        size = len(units) // 2
    else:

        def cut(a: int, b: int) -> str:
            return text[a:b]

        size = len(text)
    out, last = [], 0
    for edit in sorted(edits, key=lambda e: e["offset"]):
        start, end = edit["offset"], edit["offset"] + edit["length"]
        assert last <= start <= end <= size, f"edit outside the text or overlapping: {edit}"
        assert cut(start, end) == edit["original"], f"edit does not match the text at its offsets: {edit}"
        out += [cut(last, start), edit["replacement"]]
        last = end
    out.append(cut(last, size))
    return "".join(out)


def in_progress(server) -> float:
    """Requests the server is serving now (admitted, not yet answered), every route together, from its metrics."""
    return metric(httpx.get(server.url + "/metrics", timeout=5).text, "gecserve_requests_in_progress")


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples called ``name`` whose labels include ``labels`` (0 when none), from a
    Prometheus text exposition (parsed by prometheus_client)."""
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )
