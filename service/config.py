"""Service configuration from ``GECSERVE_*`` environment variables (pydantic-settings): data, at the bottom of the
layers (``tests/test_layers.py``), importing no other part of the service.

Every field is documented here and listed in docs/configuration.md's table. A value that cannot work is a
``SettingError``, whose message is one line naming each setting as it was given (``setting_name``: its
command-line flag, else its environment variable) and what is wrong with it, which the commands print before
exiting with status 2. The checks that need more than a value's own form (a name against the engine's or the arms'
table, a model folder, a port to listen on) are the start-up's: ``service.startup``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "gec-default"
CPU_BATCH_SIZE = 8  # measured: docs/benchmarks.md, Batch sizes
GPU_BATCH_SIZE = 32  # the batch size before it was measured on a CPU; not measured on a GPU yet


class Settings(BaseSettings):
    """All knobs of one gecserve process."""

    model_config = SettingsConfigDict(env_prefix="GECSERVE_", extra="ignore")

    host: str = Field("0.0.0.0", description="interface the HTTP and gRPC servers bind")
    http_port: int = Field(8000, ge=0, le=65535, description="HTTP port (0 = any free port)")
    grpc_port: int = Field(50051, ge=-1, le=65535, description="gRPC port (0 = any free port; -1 = no gRPC server)")
    model_path: Path = Field(DEFAULT_MODEL, description="model folder (manifest.json, tokenizer, ONNX graphs)")
    model_variant: str | None = Field(None, description="model variant (default: the manifest's, int8 when shipped)")
    models: str = Field(
        "",
        description="more models served at once, as `name=path` pairs separated by commas (a folder of model folders "
        "adds each, named by its folder); the default model, serving requests that name none, is "
        "GECSERVE_MODEL_PATH when it is set, else the first listed",
    )
    max_models: int = Field(4, ge=1, description="models loaded at once; a load beyond it is refused (409)")
    model_memory_mb: float = Field(
        0.0,
        ge=0,
        description="memory the loaded models may take, in MiB (each model's engines, as measured when it loaded); a "
        "load whose graphs would take more than is left is refused (409) (0 = no budget)",
    )
    default_backend: str = Field(
        "accelerated", description="backend serving requests that name none, outside an experiment"
    )
    provider: Literal["auto", "cpu", "cuda"] = Field("auto", description="ONNX Runtime provider")
    inference_workers: int = Field(1, ge=1, description="engines (ORT sessions), and decoding threads per queue")
    ort_threads: int = Field(1, ge=0, description="ORT intra-op threads per session (0 = ORT decides)")
    ort_spinning: bool = Field(False, description="let ORT threads spin between ops")
    ort_io_binding: Literal["auto", "on", "off"] = Field(
        "auto", description="keep cross-attention K/V on the device between decoder passes (auto: with CUDA)"
    )
    preprocess_workers: int = Field(2, ge=1, description="the preprocessing pool's threads or processes")
    preprocess_mode: Literal["thread", "process"] = Field("thread", description="preprocessing pool kind")
    spelling: bool = Field(
        True,
        description="spelling stage before the model (where the model ships a vocabulary); `options.spelling: false` "
        "turns it off per request",
    )
    lm_review: bool = Field(
        True,
        description="the n-gram language model's review of each correction (where the model ships one): it vetoes "
        "edits that make a sentence much less likely and adds article and preposition edits",
    )
    max_batch_size: int | None = Field(
        None,
        ge=1,
        description="sentences per decoding batch (unset: the device's, 8 on a CPU and 32 with CUDA; an experiment "
        "arm may set its own, `max_batch_size`)",
    )
    max_batch_tokens: int = Field(4096, ge=16, description="padded tokens per decoding batch")
    continuous_batching: str = Field(
        "aggressive",
        description="strategies whose sentences join and leave the batch between decoder passes, comma-separated "
        "(greedy, aggressive, beam, sample; empty: each batch is decoded to the end before the next starts)",
    )
    max_wait_ms: float = Field(2.0, ge=0, description="how long a batch may wait to fill")
    max_queue: int = Field(512, ge=1, description="queued sentences per queue before 503")
    admit_within: float = Field(
        0.5,
        ge=0,
        le=1,
        description="503 at once when the queued work ahead and the request's own are estimated to take more than "
        "this share of the time left to the deadline, never on an idle queue (nothing queued ahead, nothing running) "
        "(0 = off); the gateway's own load (the event loop's lag and the requests in flight) is held to the same "
        "share (GECSERVE_ADMIT_BY_LOAD)",
    )
    admit_by_load: bool = Field(
        True,
        description="503 at once, before any preprocessing, also when the event loop's lag and the requests in flight "
        "(at the CPU time an answer takes now) are estimated to take more than GECSERVE_ADMIT_WITHIN of the time left "
        "to the deadline, never with no request in flight",
    )
    loop_lag_smoothing_s: float = Field(
        1.0,
        gt=0,
        description="the event loop's lag that admission by load counts is smoothed exponentially over this long (a "
        "change counts for 63% after it)",
    )
    request_timeout_s: float = Field(10.0, gt=0, description="deadline of a request (504 past it)")
    max_text_chars: int = Field(20_000, ge=1, description="longest text accepted (413 above)")
    max_texts: int = Field(64, ge=1, description="most paragraphs in one `texts` request")
    interactive_max_chars: int = Field(2_000, ge=1, description="requests up to this size are served first")
    cache_size: int = Field(50_000, ge=0, description="sentences kept by the in-memory cache (0 = off)")
    drain_timeout_s: float = Field(20.0, ge=0, description="graceful shutdown: time to finish in-flight work")
    shutdown_delay_s: float = Field(
        0.0,
        ge=0,
        description="graceful shutdown: after SIGTERM, readiness answers 503 but requests are still served this "
        "long, so that load balancers polling `/readyz` stop sending first; then the drain (Kubernetes: the "
        "gateway's preStop sleep does this instead)",
    )
    keep_alive_s: int = Field(
        75,
        ge=1,
        description="idle HTTP keep-alive connections are closed after this long: keep it above the idle timeout "
        "of any load balancer or client pool in front (60 s and 5 s are common), so they close first",
    )
    experiment: Path | None = Field(
        None, description="experiment file (YAML) to run from start-up; see deploy/experiments/"
    )
    shadow_timeout_s: float = Field(30.0, gt=0, description="a shadow comparison not decoded by then is dropped")
    redis_url: str | None = Field(
        None,
        description="Redis shared by replicas: the experiment, their merged numbers, the sentence cache, "
        "the API keys' rate-limit buckets (e.g. redis://host:6379/0)",
    )
    redis_prefix: str = Field("gecserve:", description="prefix of every Redis key this service writes")
    cache_ttl_s: float = Field(
        86_400.0,
        ge=0,
        description="TTL of sentence cache entries in Redis (with GECSERVE_REDIS_URL; 0 = no Redis cache)",
    )
    cache_timeout_s: float = Field(
        0.1, gt=0, description="a Redis cache lookup or write not answered by then is a miss (and backs the cache off)"
    )
    queue_url: str | None = Field(
        None, description="Redis of the job streams: decode on `gecserve worker` processes (unset: in this process)"
    )
    worker_timeout_s: float = Field(
        5.0, gt=0, description="with GECSERVE_QUEUE_URL: not ready while no worker has sent a heartbeat for this long"
    )
    claim_idle_s: float = Field(
        3.0, gt=0, description="worker: a job held this long by a silent worker is claimed by another"
    )
    max_deliveries: int = Field(3, ge=1, description="worker: deliveries of a job before it is dead-lettered")
    front_ends: int = Field(
        0,
        ge=0,
        description="HTTP and gRPC front-end processes sharing the ports, each model decoded by an engine process of "
        "its own, serving the models it started with (0: one process serves and decodes)",
    )
    engine_dir: Path | None = Field(
        None, description="a front end's: the folder of the engine processes' sockets (set by `--front-ends`)"
    )
    admin_key: SecretStr | None = Field(
        None, description="bearer key of the endpoints that change state; unset: they answer 403"
    )
    api_keys_file: Path | None = Field(
        None,
        description="API keys, one `name:sha256hex` (or `name:sha256hex:rate:burst`) a line (`gecserve keys hash`); "
        "with any key configured, requests need one",
    )
    api_keys: str | None = Field(
        None, description="more API keys, the same entries separated by commas (unset with no file: no keys, open)"
    )
    rate_limit_per_s: float = Field(
        0.0, ge=0, description="requests per second per API key, a token bucket's refill (0 = no limit)"
    )
    rate_limit_burst: int = Field(20, ge=1, description="requests per API key at once: the token bucket's size")
    cors_origins: str | None = Field(
        None, description="origins browsers may call from, comma-separated (`*` = any; unset: no CORS, closed)"
    )
    feedback_ttl_s: float = Field(
        7 * 86_400.0, gt=0, description="how long an answer's edit ids take feedback (`POST /v1/feedback`)"
    )
    feedback_max_edits: int = Field(
        1_000_000, ge=1, description="edit ids remembered for feedback at most (the oldest are forgotten first)"
    )
    feedback_memory_mb: float = Field(
        32.0, gt=0, description="memory the edit ids remembered in this process take at most, in MiB (without Redis)"
    )
    dictionary_max_words: int = Field(
        10_000, ge=1, description="words a writer's own dictionary holds at most (`/v2/words`, `/v1/words`; 409 beyond)"
    )
    log_level: str = Field("INFO", description="log level")

    def batch_size(self, on_gpu: bool) -> int:
        """``max_batch_size``, or the device's: on a CPU a pass costs its token positions and a batch
        of mixed lengths pays for its padding, so 8 served more than 16 or 32 (docs/benchmarks.md, Batch sizes)."""
        return self.max_batch_size or (GPU_BATCH_SIZE if on_gpu else CPU_BATCH_SIZE)

    @property
    def decodes(self) -> bool:
        """Whether ``gecserve serve`` runs the engines itself: not when workers decode (``queue_url``), nor in a
        front end, whose engine process does (``engine_dir``)."""
        return self.queue_url is None and self.engine_dir is None

    @property
    def continuous_strategies(self) -> frozenset[str]:
        return frozenset(strategies(self.continuous_batching))

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, level: str) -> str:
        if level.upper() not in logging.getLevelNamesMapping():
            raise ValueError(f"not a log level; choose one of {', '.join(sorted(logging.getLevelNamesMapping()))}")
        return level

    @field_validator("redis_url", "queue_url")
    @classmethod
    def _redis_url(cls, url: str | None) -> str | None:
        from redis.connection import parse_url  # redis-py's own reading of the URL

        if url is not None:
            parse_url(url)  # ValueError: not a Redis URL
        return url


def strategies(value: str) -> list[str]:
    """A comma-separated list of strategy names, blanks ignored."""
    return [name.strip() for name in value.split(",") if name.strip()]


def setting_name(field: str, flags: Mapping[str, str]) -> str:
    """How a setting was given: its command-line flag when ``flags`` (field -> flag, the flags given) has it,
    else its environment variable."""
    return flags.get(field) or f"GECSERVE_{field.upper()}"


class SettingError(Exception):
    """Settings that cannot work; the message is one line, each setting's name and its problem."""
