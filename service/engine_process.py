"""``gecserve engine``: the engine process of one model, fed by front-end processes over ZeroMQ.

    gecserve engine --model DIR --endpoint ipc:///PATH.sock
    (other settings: GECSERVE_*, as for ``gecserve serve``: batching, ORT threads, provider)

``gecserve serve --front-ends N`` starts one per served model (``service.api.supervisor``) and restarts it if it
dies; it is not meant to be started by hand. The process loads ``inference_workers`` engines of the model, warms
them, then answers at ``--endpoint`` (``service.batching.engine_core.EngineCore``, built by
``service.wiring.engine_core``): every front end's jobs for a queue are batched together there. As in one
process, the memory decoding used goes back to the system once the engine is idle. Its metrics join the front
ends' through ``PROMETHEUS_MULTIPROC_DIR``. SIGTERM: stop reading, finish what is queued and running, answer it,
leave; SIGINT is left to the supervisor.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from service.config import SettingError, Settings
from service.engine.allocator import configure_malloc
from service.observability.logging import configure_logging
from service.observability.loop_lag import watch_loop_lag
from service.observability.metrics import Metrics
from service.startup import check_model, load_settings
from service.wiring import engine_core, release_while_idle, warm_engines

__all__ = ["main"]

log = logging.getLogger("gecserve.engine")


async def run_engine(settings: Settings, endpoint: str) -> None:
    """Load, warm up and serve at ``endpoint`` until SIGTERM."""
    engines = await asyncio.to_thread(warm_engines, settings, settings.inference_workers)
    metrics = Metrics()
    core, idle = engine_core(settings, engines, endpoint, metrics)
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, core.stop)
    core.bind()
    release = asyncio.create_task(release_while_idle(idle, lambda: core.busy), name="release-memory")
    log.info("engine ready", extra={"model": str(settings.model_path), "endpoint": endpoint})
    try:
        async with watch_loop_lag(metrics.loop_lagged):
            await core.run()
    finally:
        release.cancel()
    log.info("engine stopped", extra={"endpoint": endpoint})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve engine", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True, help="the model folder")
    parser.add_argument("--endpoint", required=True, help="the ZeroMQ endpoint to answer at (ipc://PATH)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor says when to stop, with SIGTERM
    configure_malloc()  # before any thread: see service.engine.allocator
    flags = {"model_path": "--model"}
    try:
        settings = load_settings({"model_path": args.model, "models": ""}, flags)
        check_model(settings, flags, preprocesses=False)
    except SettingError as error:
        print(f"gecserve engine: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    asyncio.run(run_engine(settings, args.endpoint))
    return 0
