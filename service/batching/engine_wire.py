"""The one contract between front-end processes and an engine process: what travels over ZeroMQ, as msgspec
structs encoded with MessagePack.

A front end (``engine_client.py``) sends a ``Submit`` per request: the request's jobs for one queue, admitted all
or none by the engine's batcher. The engine (``engine_core.py``) answers each with one ``Answer``: every job's
result, or the one error that refused or failed them, with the queue's estimate of the wait for work sent now,
which the front end's admission reads before it preprocesses the next request. A ``Submit`` without jobs is a
ping: its ``Answer`` says the engine is there. Deadlines travel as seconds left, so that no clock is shared.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["ANSWER_DECODER", "ENCODER", "SUBMIT_DECODER", "Answer", "Submit", "WireJob"]


class WireJob(msgspec.Struct, array_like=True):
    """One sentence job: its id, source tokens, priority, seconds left before its deadline (None: none), keep
    bias, and its decoding (``decoding_to_json``)."""

    id: str
    tokens: list[int]
    priority: int
    seconds_left: float | None
    keep_bias: float
    decoding: dict[str, Any]


class Submit(msgspec.Struct, array_like=True):
    """A request's jobs for the queue ``queue`` (none: a ping), numbered ``request`` by the front end."""

    request: int
    queue: str
    jobs: list[WireJob]


class Answer(msgspec.Struct, array_like=True):
    """The answer to ``Submit`` number ``request``.

    ``results``: per job, ``{"result": DecodeResult JSON, "seconds": decoding time, "batch_size": rows}``, in
    order; or ``error``, a reason (``queue_full``, ``wait``, ``deadline``, ``stopped``, ``invalid``, ``failed``),
    with ``message`` and, when refused, ``depth`` and ``retry_after`` seconds. ``wait`` is the queue's estimated
    wait for work sent now, in seconds."""

    request: int
    results: list[dict[str, Any]] | None = None
    error: str | None = None
    message: str = ""
    depth: int = 0
    retry_after: float = 0.0
    wait: float = 0.0


ENCODER = msgspec.msgpack.Encoder()
SUBMIT_DECODER = msgspec.msgpack.Decoder(Submit)
ANSWER_DECODER = msgspec.msgpack.Decoder(Answer)
