"""Every key this service writes in Redis: one table of key families, each with its pattern, its Redis type, what
it holds, its expiry and the module that builds its keys; the writers build their keys from it (``KeyFamily.key``).

Every key starts with ``GECSERVE_REDIS_PREFIX`` (``gecserve:``), the ``prefix`` the writers are given. The job
streams of one model live under its own namespace, ``MODEL_STREAMS`` (``{model}`` is ``name@version/variant``), so
a worker only ever decodes for the model version its gateways preprocess for. Only the sentence cache, the rate
limit buckets, the edit ids, the feedback counts and the reply streams expire: with ``maxmemory-policy
volatile-lru`` Redis evicts those and never the experiment state, the dictionaries or the job streams. The
deployment page's table (docs/deployment.md, "Redis keys") is ``FAMILIES``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CACHE",
    "DEAD_JOBS",
    "EXPERIMENT",
    "EXPERIMENT_REPLICAS",
    "FAMILIES",
    "FEEDBACK_COUNTS",
    "FEEDBACK_EDIT",
    "FEEDBACK_EDITS",
    "JOBS",
    "MODEL_STREAMS",
    "QUEUES",
    "RATE_LIMIT",
    "REPLICAS",
    "REPLY",
    "RETIRED_EXPERIMENT",
    "WORDS",
    "WORKERS",
    "KeyFamily",
]


@dataclass(frozen=True)
class KeyFamily:
    """Keys of one kind: ``pattern`` follows the prefix, each ``{field}`` in it filled in by ``key``."""

    pattern: str
    type: str  # the Redis type: string, hash, set, sorted set, stream
    holds: str
    expiry: str
    built_by: str  # the module that builds these keys

    def key(self, prefix: str, **fields: str) -> str:
        """The key of these ``fields`` under ``prefix``."""
        return prefix + self.pattern.format(**fields)

    def stem(self, prefix: str) -> str:
        """The keys' start up to their first field, under ``prefix``: what a Lua script appends the fields to."""
        return prefix + self.pattern.split("{", 1)[0]


MODEL_STREAMS = "{model}:"  # one model's job streams: name@version/variant

CACHE = KeyFamily(
    "cache:{digest}",
    "string",
    "a decoded sentence, under a hash of its model, version, variant, decoding and text",
    "`GECSERVE_CACHE_TTL_S`",
    "service.pipeline.cache",
)
WORDS = KeyFamily(
    "words:{user}",
    "set",
    "a writer's own words (`/v1/words`, `/v2/words`)",
    "none (Redis deletes it with its last word)",
    "service.pipeline.dictionary",
)
RATE_LIMIT = KeyFamily(
    "ratelimit:{key}",
    "hash",
    "an API key's token bucket: `tokens` and when they were counted (`at`)",
    "the time the bucket takes to fill, and 1 s",
    "service.api.access.ratelimit",
)
FEEDBACK_EDIT = KeyFamily(
    "feedback:edit:{id}",
    "hash",
    "where an answer's edit id came from and, once feedback came, its `action`",
    "`GECSERVE_FEEDBACK_TTL_S` after the answer",
    "service.experiments.feedback",
)
FEEDBACK_EDITS = KeyFamily(
    "feedback:edits",
    "sorted set",
    "the remembered edit ids by when (microseconds), at most `GECSERVE_FEEDBACK_MAX_EDITS`",
    "none (ids leave it as their hashes expire)",
    "service.experiments.feedback",
)
FEEDBACK_COUNTS = KeyFamily(
    "feedback:counts:{experiment}:{run}",
    "hash",
    "an experiment run's feedback counts: `arm`, edit type and action (joined by `\\x1f`) to a count",
    "30 days after its last change (at least twice `GECSERVE_FEEDBACK_TTL_S`)",
    "service.experiments.feedback",
)
EXPERIMENT = KeyFamily(
    "experiment",
    "string",
    "the experiment's state (JSON), changed in optimistic transactions",
    "none",
    "service.experiments.store",
)
RETIRED_EXPERIMENT = KeyFamily(
    "experiment:{name}:state",
    "string",
    "a stopped experiment's state (JSON)",
    "none (deleted when an experiment of that name starts)",
    "service.experiments.store",
)
EXPERIMENT_REPLICAS = KeyFamily(
    "experiment:{name}:replicas",
    "hash",
    "each replica's numbers in the experiment (zlib-compressed JSON), merged on read",
    "none (deleted when an experiment of that name starts)",
    "service.experiments.store",
)
REPLICAS = KeyFamily(
    "replicas",
    "sorted set",
    "each replica's last heartbeat (Unix seconds), for the live-replica count",
    "none (heartbeats older than 100 s leave it)",
    "service.experiments.store",
)
JOBS = KeyFamily(
    MODEL_STREAMS + "jobs:{queue}",
    "stream",
    "a decoding queue's jobs, read by the consumer group `workers`",
    "none (a job is deleted when answered)",
    "service.batching.streams",
)
DEAD_JOBS = KeyFamily(
    MODEL_STREAMS + "dead:{queue}",
    "stream",
    "a queue's jobs delivered too many times and never answered",
    "none (the newest 10,000 or so kept)",
    "service.batching.streams",
)
QUEUES = KeyFamily(
    MODEL_STREAMS + "queues",
    "set",
    "the queues gateways have used (a worker given no `--arm` reads them all)",
    "none",
    "service.batching.streams",
)
REPLY = KeyFamily(
    MODEL_STREAMS + "reply:{gateway}",
    "stream",
    "a gateway's own replies, read only by it",
    "60 s after a gateway or a worker last touched it",
    "service.batching.streams",
)
WORKERS = KeyFamily(
    MODEL_STREAMS + "workers",
    "sorted set",
    "each worker's last heartbeat (Unix seconds)",
    "none (heartbeats older than an hour leave it)",
    "service.batching.streams",
)

FAMILIES = (
    CACHE,
    WORDS,
    RATE_LIMIT,
    FEEDBACK_EDIT,
    FEEDBACK_EDITS,
    FEEDBACK_COUNTS,
    EXPERIMENT,
    RETIRED_EXPERIMENT,
    EXPERIMENT_REPLICAS,
    REPLICAS,
    JOBS,
    DEAD_JOBS,
    QUEUES,
    REPLY,
    WORKERS,
)
