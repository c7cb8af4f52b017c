"""The Redis Streams transport's shared vocabulary: key names, jobs and replies as stream entries, and the
helpers both sides use (the consumer group, stopping a reading task).

Gateways (``gecserve serve --queue redis://...``) and workers (``gecserve worker``) meet
under one key namespace per model, ``{prefix}{name}@{version}/{variant}:``, so a worker only ever
decodes for the model version its gateways preprocess for, and a new version starts from empty
streams. Under it:

* ``jobs:{queue}``: one stream per decoding queue, read by the consumer group ``workers``;
* ``dead:{queue}``: jobs that failed ``max_deliveries`` deliveries (a worker died with them each time);
* ``queues``: a set of the queue names gateways have used (a worker given no ``--arm`` reads them all);
* ``reply:{gateway}``: a gateway's own results, a stream only it reads; its TTL is refreshed while the
  gateway lives and by every worker that writes to it, so a gateway that dies leaves nothing behind;
* ``workers``: a sorted set of worker id -> last heartbeat (Unix seconds).

A job entry carries the source tokens, the priority, the deadline as Unix time (monotonic clocks do
not cross processes), the decoding (strategy and parameters) and where to reply. A reply carries the
job id and either the decode result with the batch's decoding time, or an error reason and message.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError
from redis.typing import EncodableT, FieldT

from service.batching.job import Job, Priority
from service.redis_keys import DEAD_JOBS, JOBS, MODEL_STREAMS, QUEUES, REPLY, WORKERS

__all__ = [
    "GROUP",
    "REPLY_TTL_S",
    "JobEntry",
    "Reply",
    "StreamKeys",
    "cancel_task",
    "decode_job",
    "decode_reply",
    "encode_error",
    "encode_job",
    "encode_result",
    "ensure_group",
]

GROUP = "workers"

Fields = dict[bytes | str, bytes | str]
"""A stream entry's fields as redis-py returns them (bytes, as this project's clients do not decode replies)."""

ReplyFields = dict[FieldT, EncodableT]
"""A reply's fields as written (XADD): what ``encode_result`` and ``encode_error`` make."""

StreamsRead = list[tuple[bytes | str, list[tuple[bytes | str, Fields]]]]
"""An XREAD or XREADGROUP reply of new entries: each stream read, with its entries ``(entry id, fields)``. That is
the reply's shape in RESP2, the protocol this project's clients speak; redis-py types the reply of every protocol
version at once."""


@dataclass(frozen=True)
class StreamKeys:
    """Every key of one model's transport (see the module docstring; the patterns: ``service.redis_keys``)."""

    prefix: str
    model: str  # name@version/variant

    @classmethod
    def for_model(cls, prefix: str, name: str, version: str, variant: str) -> StreamKeys:
        return cls(prefix, f"{name}@{version}/{variant}")

    @property
    def base(self) -> str:
        return self.prefix + MODEL_STREAMS.format(model=self.model)

    def jobs(self, queue: str) -> str:
        return JOBS.key(self.prefix, model=self.model, queue=queue)

    def dead(self, queue: str) -> str:
        return DEAD_JOBS.key(self.prefix, model=self.model, queue=queue)

    def reply(self, gateway: str) -> str:
        return REPLY.key(self.prefix, model=self.model, gateway=gateway)

    @property
    def queues(self) -> str:
        return QUEUES.key(self.prefix, model=self.model)

    @property
    def workers(self) -> str:
        return WORKERS.key(self.prefix, model=self.model)

    def queue_of(self, stream: str) -> str:
        """The queue name of a ``jobs:`` stream key."""
        return stream.removeprefix(self.jobs(""))


def _text(fields: Fields) -> dict[str, str]:
    return {
        (k.decode() if isinstance(k, bytes) else k): (v.decode("utf-8") if isinstance(v, bytes) else v)
        for k, v in fields.items()
    }


def _unix_deadline(deadline: float | None) -> str:
    return "" if deadline is None else repr(time.time() + (deadline - time.monotonic()))


def _monotonic_deadline(unix: str) -> float | None:
    return None if not unix else time.monotonic() + (float(unix) - time.time())


def encode_job(job: Job, reply_to: str, decoding: dict[str, Any]) -> dict[str, str]:
    """A job as stream fields; ``decoding`` is ``{"strategy": ..., "params": {...}}`` (JSON-ready)."""
    return {
        "id": job.id,
        "reply": reply_to,
        "tokens": " ".join(map(str, job.tokens)),
        "priority": str(int(job.priority)),
        "deadline": _unix_deadline(job.deadline),
        "keep_bias": repr(job.keep_bias),
        "decoding": json.dumps(decoding, separators=(",", ":")),
    }


@dataclass
class JobEntry:
    """A job read from a stream: the job (its deadline back on this process's monotonic clock), where
    its result goes, and its decoding."""

    job: Job
    reply_to: str
    decoding: dict[str, Any]


def decode_job(fields: Fields) -> JobEntry:
    data = _text(fields)
    job = Job(
        tokens=[int(t) for t in data["tokens"].split()],
        priority=Priority(int(data["priority"])),
        deadline=_monotonic_deadline(data["deadline"]),
        keep_bias=float(data.get("keep_bias", 0.0)),
        id=data["id"],
    )
    return JobEntry(job, data["reply"], json.loads(data["decoding"]))


def encode_result(job_id: str, result: dict[str, Any], seconds: float, batch_size: int) -> ReplyFields:
    """A decoded job's reply: the result (JSON-ready), the batch's decoding time and size."""
    payload = {"result": result, "seconds": seconds, "batch_size": batch_size}
    return {"id": job_id, "ok": json.dumps(payload, separators=(",", ":"))}


def encode_error(job_id: str, reason: str, message: str) -> ReplyFields:
    """A job that was not decoded: ``deadline`` (dropped unrun), ``dead_letter``, ``invalid`` or ``failed``."""
    return {"id": job_id, "error": reason, "message": message}


@dataclass(frozen=True)
class Reply:
    job_id: str
    result: dict[str, Any] | None = None
    seconds: float = 0.0
    batch_size: int = 0
    error: str | None = None
    message: str = ""


def decode_reply(fields: Fields) -> Reply:
    data = _text(fields)
    if "ok" in data:
        payload = json.loads(data["ok"])
        return Reply(data["id"], payload["result"], float(payload["seconds"]), int(payload["batch_size"]))
    return Reply(data["id"], error=data["error"], message=data.get("message", ""))


REPLY_TTL_S = 60.0  # a reply stream expires this long after a gateway or a worker last touched it


async def cancel_task(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait for it to end. Cancelled again until it does: a Redis call interrupted
    mid-way can surface as a connection error, which a retry loop would take for an outage and absorb."""
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=0.2)


async def ensure_group(client: aioredis.Redis, stream: str) -> None:
    """The ``workers`` consumer group on ``stream`` (created with the stream, reading from its start)."""
    try:
        await client.xgroup_create(stream, GROUP, id="0", mkstream=True)
    except ResponseError as error:
        if "BUSYGROUP" not in str(error):
            raise
