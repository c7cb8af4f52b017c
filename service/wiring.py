"""Wiring: every object serving needs, built from ``Settings`` in one place.

``gecserve serve`` runs a ``Gateway``: its parts (metrics, the sentence cache, the preprocessing pool,
the experiments and their store, then the decoding queues with their engines or the job streams, the
dispatcher and the shadow comparisons) are made, started, warmed up and stopped here, and handed to
the ``Pipeline``, which only serves requests. ``gecserve worker`` builds its engine, batch policy and
consumer from the same functions (``runtime_options``, ``load_engines``, ``batch_policy``,
``replica_id``, ``worker_consumer``, ``release_while_idle``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable

import redis.asyncio as aioredis

from service.batching import BatchPolicy, Job
from service.batching.stream_worker import ConsumerEvents, StreamConsumer
from service.batching.streams import StreamKeys
from service.config import Settings
from service.engine.allocator import IdleRelease, keep_freed_blocks
from service.engine.decoding.types import DecodeParams
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest
from service.engine.offline import model_review
from service.engine.runtime import RuntimeOptions
from service.experiments.arms import BACKENDS, Arm
from service.experiments.definition import load_experiment
from service.experiments.manager import ExperimentManager
from service.experiments.store import ExperimentStore, LocalStore, RedisStore
from service.inference.remote import RemoteBatch
from service.observability.hooks import MetricsHooks
from service.observability.metrics import Metrics
from service.observability.stats import RollingStats
from service.pipeline.cache import MemoryCache, RedisCache, SentenceCache, TieredCache
from service.pipeline.dispatch import SentenceDispatcher
from service.pipeline.pipeline import Pipeline
from service.pipeline.preprocess import Preprocessor
from service.pipeline.queues import GENERATE_QUEUE, DecodingQueues, LocalQueues
from service.pipeline.shadow import ShadowComparer
from service.pipeline.stream_queues import StreamQueues
from service.redis_pool import redis_client

__all__ = [
    "Gateway",
    "batch_policy",
    "load_engines",
    "release_while_idle",
    "replica_id",
    "runtime_options",
    "worker_consumer",
]

log = logging.getLogger(__name__)

WARMUP_TEXT = "This are a warm-up sentence for the model."
WARMUP_ROUNDS = 3  # the first run of a session is slow; later ones teach admission control the real cost
WARMUP_BATCH = 16  # then one batch this large, for the cost of a batch at a second size


def runtime_options(settings: Settings) -> RuntimeOptions:
    """How ONNX Runtime runs the graphs: provider, threads, spinning, IO binding."""
    return RuntimeOptions(
        provider=settings.provider,
        intra_op_threads=settings.ort_threads,
        spinning=settings.ort_spinning,
        io_binding=settings.ort_io_binding,
    )


def load_engines(settings: Settings, count: int) -> list[Engine]:
    """``count`` engines of the settings' model (each its own ONNX Runtime sessions); slow: call in a thread."""
    options = runtime_options(settings)
    return [Engine(settings.model_path, settings.model_variant, options) for _ in range(count)]


def batch_policy(
    settings: Settings, on_gpu: bool, admit_within: float | None = None, max_queue: int | None = None
) -> BatchPolicy:
    """The batching policy the settings give, on a GPU or not; ``admit_within`` and ``max_queue`` override the
    settings' (a worker admits what the gateway already admitted)."""
    return BatchPolicy(
        max_batch_size=settings.batch_size(on_gpu),
        max_batch_tokens=settings.max_batch_tokens,
        max_wait_ms=settings.max_wait_ms,
        max_queue=settings.max_queue if max_queue is None else max_queue,
        admit_within=settings.admit_within if admit_within is None else admit_within,
    )


def replica_id() -> str:
    """This process's name among the replicas and workers sharing a Redis: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def sentence_cache(settings: Settings, metrics: Metrics) -> TieredCache:
    """The in-memory LRU, then Redis when ``redis_url`` is set (and ``cache_ttl_s`` is not 0)."""
    levels: list[tuple[str, SentenceCache]] = [("memory", MemoryCache(settings.cache_size))]
    if settings.redis_url and settings.cache_ttl_s > 0:
        client = redis_client(settings.redis_url, timeout_s=1, connect_timeout_s=0.5)
        shared = RedisCache(client, settings.redis_prefix, settings.cache_ttl_s, on_error=metrics.cache_error)
        levels.append(("redis", shared))
    return TieredCache(levels, metrics.cache_lookup)


def experiment_store(settings: Settings) -> ExperimentStore:
    """Redis, shared by the replicas, when ``redis_url`` is set; else this process's own."""
    return RedisStore(settings.redis_url, settings.redis_prefix) if settings.redis_url else LocalStore()


async def release_while_idle(release: IdleRelease, busy: Callable[[], bool]) -> None:
    """Until cancelled: every ``idle_s`` seconds in which no batch has ended and ``busy()`` is False, give the
    memory decoding used back to the system, in a thread (``engine.allocator.IdleRelease``)."""
    while True:
        await asyncio.sleep(release.idle_s)
        if not busy() and release.idle():
            await asyncio.to_thread(release.release)


class Gateway:
    """What ``gecserve serve`` runs: the pipeline and every part it serves with (see the module docstring).

    Made at once, cheaply (the HTTP and gRPC servers answer health checks while it starts); ``start`` loads the
    engines or joins the workers' streams, opens the experiment and warms the queues up, after which the pipeline
    is ready; ``stop`` finishes what is queued and running and closes every part."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        metrics = Metrics()
        self.cache = sentence_cache(settings, metrics)
        self.preprocessor = Preprocessor(
            settings.model_path, settings.preprocess_mode, settings.preprocess_workers, settings.spelling
        )
        self.replica = replica_id()
        experiments = ExperimentManager(settings.default_backend, experiment_store(settings), self.replica)
        manifest = ModelManifest.load(settings.model_path)
        self.pipeline = Pipeline(settings, metrics, RollingStats(), manifest, self.preprocessor, experiments)
        self.queues: DecodingQueues | None = None
        self.shadow: ShadowComparer | None = None
        self._release: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Make the parts that decode, open the experiment, warm up; then the pipeline is ready."""
        settings, pipeline = self.settings, self.pipeline
        manifest, metrics = pipeline.manifest, pipeline.metrics
        if settings.queue_url:
            await self.preprocessor.start()
            variant = settings.model_variant or manifest.default_variant
            keys = StreamKeys.for_model(settings.redis_prefix, manifest.name, manifest.version, variant)
            queues: DecodingQueues = StreamQueues(
                settings.queue_url,
                keys,
                self.replica,
                settings.max_queue,
                settings.admit_within,
                settings.worker_timeout_s,
                metrics,
            )
            local = None
        else:
            count = settings.inference_workers
            engines, _ = await asyncio.gather(
                asyncio.to_thread(load_engines, settings, count), self.preprocessor.start()
            )
            variant = engines[0].model.variant
            hooks = MetricsHooks(metrics, pipeline.stats)
            policy = batch_policy(settings, engines[0].model.on_gpu)
            queues = local = LocalQueues(engines, policy, hooks, continuous=settings.continuous_strategies)
        self.queues = queues
        await queues.start()
        model_key = f"{manifest.name}\x1f{manifest.version}\x1f{variant}"
        codec = self.preprocessor.codec
        review = await asyncio.to_thread(model_review, settings.model_path) if settings.lm_review else None
        dispatcher = SentenceDispatcher(queues, self.cache, codec, metrics, model_key, settings.max_queue, review)
        self.shadow = ShadowComparer(dispatcher, pipeline.experiments, metrics, settings.shadow_timeout_s)
        await pipeline.experiments.open(load_experiment(settings.experiment) if settings.experiment else None)
        if local is not None:
            await self._warm_up(local)
            keep_freed_blocks()  # process-wide: bounds what malloc keeps once the idle release has run
            busy = lambda: local.busy  # noqa: E731
            self._release = asyncio.create_task(release_while_idle(local.idle_release, busy), name="release-memory")
        pipeline.serve_with(queues, dispatcher, self.shadow, variant)
        log.info("pipeline ready", extra={"model": manifest.name, "variant": variant})

    async def _warm_up(self, queues: LocalQueues) -> None:
        """Every queue's first batches, which are slow; then one larger batch each, so that admission
        control knows what a batch costs at two sizes. One queue at a time: queues warmed together share
        the engines, and would learn several times what a batch costs alone."""
        experiments = self.pipeline.experiments
        arms = [Arm.of_backend(name) for name in BACKENDS]
        arms += [experiments.resolve(name) for name in experiments.known_arms()]
        tokens = self.preprocessor.encode(WARMUP_TEXT)
        batchers = {arm.queue: queues.get(arm) for arm in arms}
        batchers[GENERATE_QUEUE] = queues.generate()
        payload = ("beam", DecodeParams(num_beams=2))
        sizes = [1] * WARMUP_ROUNDS + [min(WARMUP_BATCH, queues.policy.max_batch_size, self.settings.max_queue)]
        for name, batcher in batchers.items():
            for size in sizes:
                await batcher.submit_many([Job(tokens=tokens, arm=name, payload=payload) for _ in range(size)])

    async def stop(self) -> None:
        """Stop taking work, finish what is queued and running (up to the drain timeout), close every part."""
        self.pipeline.ready = False
        if self._release is not None:
            self._release.cancel()
            await asyncio.gather(self._release, return_exceptions=True)
        if self.shadow is not None:
            await self.shadow.stop()
        if self.queues is not None:
            await self.queues.stop(self.settings.drain_timeout_s)
        await self.pipeline.experiments.close()
        await self.cache.close()
        self.preprocessor.close()


def worker_consumer(
    settings: Settings, engine: Engine, client: aioredis.Redis, queues: list[str] | None, metrics: Metrics
) -> tuple[StreamConsumer, IdleRelease]:
    """The consumer of ``gecserve worker``: reads the job streams of ``engine``'s model (the ``queues`` named, or
    all), batches them as the gateway's own queues batch (``RemoteBatch``), decodes and answers; the gateway
    admitted the jobs, so here they only wait for a batch. With it, the release of the memory decoding used."""
    manifest = engine.manifest
    keys = StreamKeys.for_model(settings.redis_prefix, manifest.name, manifest.version, engine.model.variant)
    size = settings.batch_size(engine.model.on_gpu)
    policy = batch_policy(settings, engine.model.on_gpu, admit_within=0, max_queue=max(settings.max_queue, 4 * size))
    idle = IdleRelease([engine])
    continuous = settings.continuous_strategies
    events = ConsumerEvents(
        claimed=lambda queue, n: metrics.worker_job(queue, "claimed", n),
        dead_lettered=lambda queue, n: metrics.worker_job(queue, "dead_letter", n),
        answered=metrics.worker_job,
    )
    consumer = StreamConsumer(
        client,
        keys,
        replica_id(),
        lambda: RemoteBatch(engine, idle, continuous, policy.max_batch_size),
        policy,
        queues,
        hooks=MetricsHooks(metrics),
        events=events,
        claim_idle_s=settings.claim_idle_s,
        max_deliveries=settings.max_deliveries,
    )
    return consumer, idle
