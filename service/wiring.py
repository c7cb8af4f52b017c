"""Wiring: every object serving needs, built from ``Settings`` in one place.

``gecserve serve`` runs a ``Gateway``: its shared parts (metrics, the sentence cache, the experiments and their
store, the feedback ledger, the model repository, the shadow comparisons) are made, started and stopped here, and
handed to the ``Pipeline``, which only serves requests. Each served model is built here too (``ModelBuilder``,
the repository's loader): its preprocessing, its decoding queues with their engines (or the job streams of its
workers), its dispatcher, warmed up before it takes traffic, at start-up and at run time alike. ``gecserve
worker`` builds its engine, batch policy and consumer from the same functions (``runtime_options``,
``warm_engines``, ``batch_policy``, ``replica_id``, ``worker_consumer``, ``release_while_idle``), and ``gecserve
engine`` its engines and core (``engine_core``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import psutil
import redis.asyncio as aioredis

from service.batching import BatchPolicy, Job
from service.batching.engine_core import EngineCore
from service.batching.stream_worker import ConsumerEvents, StreamConsumer
from service.batching.streams import StreamKeys
from service.config import Settings
from service.engine.allocator import IdleRelease, release_free_memory
from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from service.engine.manifest import ModelFolderError, ModelManifest, check_model_folder
from service.engine.offline import model_review, model_scoring
from service.engine.runtime import RuntimeOptions
from service.experiments.arms import BACKENDS, Arm
from service.experiments.definition import load_experiment
from service.experiments.feedback import FeedbackLedger, feedback_ledger
from service.experiments.parts import ExperimentParts
from service.experiments.router import Router
from service.experiments.store import ExperimentStore, LocalStore, RedisStore
from service.inference.remote import RemoteBatch
from service.observability.hooks import MetricsHooks
from service.observability.metrics import Metrics
from service.observability.stats import RollingStats
from service.pipeline.cache import MemoryCache, RedisCache, SentenceCache, TieredCache
from service.pipeline.dictionary import word_store
from service.pipeline.dispatch import SentenceDispatcher
from service.pipeline.engine_queues import EngineQueues
from service.pipeline.pipeline import Pipeline
from service.pipeline.preprocess import Preprocessor
from service.pipeline.queues import GENERATE_QUEUE, DecodingQueues, LocalQueues
from service.pipeline.served import ServedModel
from service.pipeline.shadow import ShadowComparer
from service.pipeline.stream_queues import StreamQueues
from service.redis_pool import redis_client
from service.repository.repository import ModelRepository
from service.repository.sources import ModelSource, model_sources
from service.text.categories import categorize

__all__ = [
    "Gateway",
    "ModelBuilder",
    "batch_policy",
    "engine_core",
    "engine_endpoint",
    "load_engines",
    "release_while_idle",
    "replica_id",
    "runtime_options",
    "warm_engines",
    "worker_consumer",
]

log = logging.getLogger(__name__)

WARMUP_TEXT = "This are a warm-up sentence for the model."
WARMUP_ROUNDS = 3  # the first run of a session is slow; later ones teach admission control the real cost
WARMUP_BATCH = 16  # then one batch this large, for the cost of a batch at a second size
WARMUP_SOURCE = [[0, 1, 2, 3]]  # what warms an engine fed by others: a few token ids


def runtime_options(settings: Settings) -> RuntimeOptions:
    """How ONNX Runtime runs the graphs: provider, threads, spinning, IO binding."""
    return RuntimeOptions(
        provider=settings.provider,
        intra_op_threads=settings.ort_threads,
        spinning=settings.ort_spinning,
        io_binding=settings.ort_io_binding,
    )


def load_engines(settings: Settings, count: int, model_path: Path | None = None) -> list[Engine]:
    """``count`` engines of the model at ``model_path`` (default: the settings' model), each its own ONNX Runtime
    sessions; slow: call in a thread."""
    options = runtime_options(settings)
    path = model_path or settings.model_path
    return [Engine(path, settings.model_variant, options) for _ in range(count)]


def warm_engines(settings: Settings, count: int) -> list[Engine]:
    """``load_engines``, each engine then run once on a few tokens (a session's first run is slow), for a process
    that decodes what others send (``gecserve worker``, ``gecserve engine``); slow: call in a thread."""
    engines = load_engines(settings, count)
    for engine in engines:
        engine.generate(WARMUP_SOURCE)
    return engines


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


def engine_endpoint(folder: Path, model: str) -> str:
    """Where the engine process of the served model named ``model`` listens (``gecserve serve --front-ends``)."""
    return f"ipc://{folder / model}.sock"


def sentence_cache(settings: Settings, metrics: Metrics) -> TieredCache:
    """The in-memory LRU, then Redis when ``redis_url`` is set (and ``cache_ttl_s`` is not 0)."""
    levels: list[tuple[str, SentenceCache]] = [("memory", MemoryCache(settings.cache_size))]
    if settings.redis_url and settings.cache_ttl_s > 0:
        client = redis_client(settings.redis_url, timeout_s=1, connect_timeout_s=0.5)
        shared = RedisCache(
            client, settings.redis_prefix, settings.cache_ttl_s, settings.cache_timeout_s, on_error=metrics.cache_error
        )
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


def graph_bytes(settings: Settings, source: ModelSource) -> int:
    """What loading ``source`` will take, estimated before it loads: its variant's graph files, once per engine
    (none for a gateway whose workers decode)."""
    if not settings.decodes:
        return 0
    manifest = check_model_folder(source.path, settings.model_variant, spelling=False, review=False)
    files = manifest.variants[settings.model_variant or manifest.default_variant].values()
    return settings.inference_workers * sum((source.path / file).stat().st_size for file in files)


class ModelBuilder:
    """Builds a served model from its source, ready to take traffic: the repository's loader (see the module
    docstring). ``ModelFolderError`` naming the file at fault when the folder cannot be served."""

    def __init__(
        self,
        settings: Settings,
        metrics: Metrics,
        stats: RollingStats,
        cache: SentenceCache,
        router: Router,
        replica: str,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self.stats = stats
        self.cache = cache
        self.router = router
        self.replica = replica

    async def __call__(self, source: ModelSource) -> ServedModel:
        settings = self.settings
        started = time.monotonic()
        manifest = await asyncio.to_thread(
            check_model_folder,
            source.path,
            settings.model_variant,
            settings.decodes,
            settings.spelling,
            settings.lm_review,
        )
        try:
            preprocessor = Preprocessor(
                source.path, settings.preprocess_mode, settings.preprocess_workers, settings.spelling
            )
        except Exception as error:
            raise ModelFolderError(f"{source.path / manifest.tokenizer} cannot be read: {error}") from error
        queues: DecodingQueues | None = None
        try:
            variant = settings.model_variant or manifest.default_variant
            memory = 0
            if settings.engine_dir:
                await preprocessor.start()
                endpoint = engine_endpoint(settings.engine_dir, source.name)
                queues = EngineQueues(endpoint, settings.admit_within, self.metrics)
            elif settings.queue_url:
                await preprocessor.start()
                keys = StreamKeys.for_model(settings.redis_prefix, manifest.name, manifest.version, variant)
                queues = StreamQueues(
                    settings.queue_url,
                    keys,
                    self.replica,
                    settings.max_queue,
                    settings.admit_within,
                    settings.worker_timeout_s,
                    self.metrics,
                )
            else:
                release_free_memory()  # what loaded before freed is not this model's to reuse and not count
                resident = psutil.Process().memory_info().rss
                engines, _ = await asyncio.gather(self._engines(source), preprocessor.start())
                memory = max(0, psutil.Process().memory_info().rss - resident)
                hooks = MetricsHooks(self.metrics, self.stats)
                policy = batch_policy(settings, engines[0].model.on_gpu)
                queues = LocalQueues(engines, policy, hooks, continuous=settings.continuous_strategies)
            await queues.start()
            review = await asyncio.to_thread(model_review, source.path) if settings.lm_review else None
            scoring = await asyncio.to_thread(model_scoring, source.path, review, preprocessor.speller)
            model_key = f"{manifest.name}\x1f{manifest.version}\x1f{variant}"
            dispatcher = SentenceDispatcher(
                queues, self.cache, preprocessor.codec, self.metrics, model_key, settings.max_queue, review
            )
            closing = None
            if isinstance(queues, LocalQueues):
                await self.warm_up(source.name, queues, preprocessor)
                closing = self._release_while_idle(queues)
        except BaseException:
            if queues is not None:
                await queues.stop(0)
            preprocessor.close()
            raise
        return ServedModel(
            source.name,
            source.path,
            manifest,
            variant,
            preprocessor,
            queues,
            dispatcher,
            memory,
            time.monotonic() - started,
            closing,
            scoring,
        )

    async def _engines(self, source: ModelSource) -> list[Engine]:
        try:
            return await asyncio.to_thread(load_engines, self.settings, self.settings.inference_workers, source.path)
        except Exception as error:  # ONNX Runtime's message names the graph file it could not load
            raise ModelFolderError(f"{source.path}: the engine cannot load the model: {error}") from error

    async def warm_up(self, name: str, queues: LocalQueues, preprocessor: Preprocessor) -> None:
        """The first batches of every queue not warmed yet, which are slow; then one larger batch each, so that
        admission control knows what a batch costs at two sizes. One queue at a time: queues warmed together
        share the engines, and would learn several times what a batch costs alone. The queues: every backend's,
        those of the experiment's arms that model ``name`` serves, and ``generate``."""
        router = self.router
        arms = [Arm.of_backend(backend) for backend in BACKENDS]
        arms += [arm for arm in map(router.resolve, router.known_arms()) if arm.model in (None, name)]
        tokens = preprocessor.encode(WARMUP_TEXT)
        cold = [arm for arm in arms if arm.queue not in queues.batchers]
        batchers = {arm.queue: queues.get(arm) for arm in cold}
        if GENERATE_QUEUE not in queues.batchers:
            batchers[GENERATE_QUEUE] = queues.generate()
        payload = ("beam", DecodeParams(num_beams=2))
        sizes = [1] * WARMUP_ROUNDS + [min(WARMUP_BATCH, queues.policy.max_batch_size, self.settings.max_queue)]
        for batcher in batchers.values():
            for size in sizes:
                await batcher.submit_many([Job(tokens=tokens, payload=payload) for _ in range(size)])

    @staticmethod
    def _release_while_idle(queues: LocalQueues) -> Callable[[], Awaitable[None]]:
        """Start giving the memory decoding used back while ``queues`` are idle; returns what stops it."""
        busy = lambda: queues.busy  # noqa: E731
        task = asyncio.create_task(release_while_idle(queues.idle_release, busy), name="release-memory")

        async def stop() -> None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

        return stop


class Gateway:
    """What ``gecserve serve`` runs: the pipeline and every part it serves with (see the module docstring).

    Made at once, cheaply (the HTTP and gRPC servers answer health checks while it starts); ``start`` loads every
    model the settings name (engines or the workers' streams, warmed up), opens the experiment, after which the
    pipeline is ready; ``stop`` finishes what is queued and running and closes every part."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        metrics, stats = Metrics(), RollingStats()
        self.cache = sentence_cache(settings, metrics)
        self.replica = replica_id()
        self.sources = model_sources(settings)
        self.feedback: FeedbackLedger = feedback_ledger(
            settings.redis_url,
            settings.redis_prefix,
            settings.feedback_ttl_s,
            settings.feedback_max_edits,
            int(settings.feedback_memory_mb * 2**20),
        )
        experiments = ExperimentParts.build(
            settings.default_backend, experiment_store(settings), self.replica, feedback=self.feedback
        )
        self.builder = ModelBuilder(settings, metrics, stats, self.cache, experiments.router, self.replica)
        self.models = ModelRepository(
            self.builder,
            settings.max_models,
            int(settings.model_memory_mb * 2**20),
            settings.drain_timeout_s,
            lambda source: graph_bytes(settings, source),
        )
        experiments.admin.model_names = self.models.names
        self.shadow = ShadowComparer(experiments.tally, metrics, settings.shadow_timeout_s)
        startup = ModelManifest.load(self.sources[0].path)
        self.words = word_store(settings.redis_url, settings.redis_prefix, settings.dictionary_max_words)
        self.pipeline = Pipeline(
            settings, metrics, stats, self.models, experiments, self.shadow, self.feedback, startup, self.words
        )

    async def start(self) -> None:
        """Load every model (the default first), open the experiment; then the pipeline is ready."""
        # the edit classifier's first call loads its word lists (a third of a second): not on a request's time
        await asyncio.to_thread(categorize, "a", "an", "I ate ", " apple.")
        for source in self.sources:
            await self.models.load(source)
        experiment = self.settings.experiment
        await self.pipeline.experiments.admin.open(load_experiment(experiment) if experiment else None)
        for source in self.sources:  # the queues of the experiment's own arms, warmed up
            model = self.models.get(source.name)
            if isinstance(model.queues, LocalQueues):
                await self.builder.warm_up(source.name, model.queues, model.preprocessor)
        self.pipeline.ready = True
        log.info("pipeline ready", extra={"models": self.models.names(), "default": self.models.default_name})

    async def stop(self) -> None:
        """Stop taking work, finish what is queued and running (up to the drain timeout), close every part."""
        self.pipeline.ready = False
        await self.shadow.stop()
        await self.models.close()
        await self.pipeline.experiments.sync.close()
        await self.feedback.close()
        await self.words.close()
        await self.cache.close()


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


def engine_core(
    settings: Settings, engines: list[Engine], endpoint: str, metrics: Metrics
) -> tuple[EngineCore, IdleRelease]:
    """The core of ``gecserve engine``: every front end's jobs for a queue batched together in one ``LocalBatcher``
    (its own admission, the settings' policy), decoded by ``engines`` as the worker decodes (``RemoteBatch``, one
    decoding thread an engine); with it, the release of the memory decoding used."""
    idle = IdleRelease(engines)
    policy = batch_policy(settings, engines[0].model.on_gpu)
    continuous = settings.continuous_strategies
    core = EngineCore(
        endpoint,
        policy,
        lambda thread: RemoteBatch(engines[thread % len(engines)], idle, continuous, policy.max_batch_size),
        len(engines),
        MetricsHooks(metrics),
        settings.drain_timeout_s,
    )
    return core, idle
