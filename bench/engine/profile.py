"""``gecserve bench profile``: where a decoding pass spends its time, beside CTranslate2 on the same sentences.

    gecserve bench profile --model models/gec-default --input dev.txt [--limit 300] [--batch-size 1,16] \\
        [--strategies greedy,aggressive] [--peer-ct2 HF_DIR] [--json OUT]

For each strategy and batch size the sentences are decoded once with both sessions timed: per sentence, the
encoder's runs, the decoder's runs and the Python around them (the rest of the wall time), per decoder pass its
run and its Python, and the Python functions that took most of that time (``cProfile``, self time, ONNX
Runtime's own calls left out). The decoder's and the encoder's inputs of that run are then replayed through
sessions with ONNX Runtime's profiler on: the share of their kernel time by operator type (the profiler's own
cost per node inflates the small nodes, so only shares are reported, and only ratios of them compared).
``--peer-ct2`` adds CTranslate2's int8 greedy decoding of the same sentences: in all, with one decoding step
(its encoder, one step and its own overhead) and per further step. ``--against MODEL_DIR`` replays the recorded
inputs through this model's graphs and another folder's (another rewrite of the same weights: graphs that take
the cache whole, as exported before ``models/export/lean.py``, are fed it whole) alternately, in rounds, and
reports each graph's time a run, their ratio and whether their outputs are the same bits: one change to the graphs
measured alone.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from bench.engine.decoding import csv_list, load_sources
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest
from service.engine.model import LAYER_INPUTS, layer_input
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions, create_inference_session

COLUMNS = [
    "strategy",
    "batch",
    "sent_per_s",
    "ms_per_sent",
    "encoder_ms",
    "decoder_ms",
    "python_ms",
    "passes_per_sent",
    "run_us_per_pass",
    "python_us_per_pass",
]
OP_COLUMNS = ["graph", "strategy", "batch", "op_type", "share"]
AGAINST_COLUMNS = ["graph", "strategy", "batch", "runs", "us_per_run", "other_us_per_run", "speedup", "identical"]
ROUNDS = 4  # rounds of the alternating replay (--against)
PEER_COLUMNS = [
    "strategy",
    "batch",
    "sent_per_s",
    "ms_per_sent",
    "encoder_and_one_step_ms",
    "passes_per_sent",
    "step_us",
]
TOP_OPS = 8
TOP_FUNCTIONS = 6
REPLAYED = 400  # decoder inputs replayed through the profiler per configuration, spread over the run


class _Watched:
    """A session stand-in that times each run, and keeps a copy of what it was fed when ``recording``."""

    def __init__(self, session: ort.InferenceSession, recording: bool) -> None:
        self.session = session
        self.recording = recording
        self.seconds = 0.0
        self.runs = 0
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, names: Any, feeds: dict[str, np.ndarray], *args: Any) -> Any:
        if self.recording:
            self.feeds.append({name: np.array(value) for name, value in feeds.items()})
        start = time.perf_counter()
        out = self.session.run(names, feeds, *args)
        self.seconds += time.perf_counter() - start
        self.runs += 1
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


def _decode_all(engine: Engine, sources: list[list[int]], strategy: str, batch: int) -> None:
    for start in range(0, len(sources), batch):
        engine.generate(sources[start : start + batch], strategy)


def _watched(engine: Engine, sources: list[list[int]], strategy: str, batch: int, recording: bool) -> tuple:
    """Decode ``sources`` with both sessions watched: the wall time and the two watchers."""
    model = engine.model
    encoder, decoder = model.encoder, model.decoder
    watchers = _Watched(encoder, recording), _Watched(decoder, recording)
    model.encoder, model.decoder = watchers  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        _decode_all(engine, sources, strategy, batch)
        return time.perf_counter() - start, *watchers
    finally:
        model.encoder, model.decoder = encoder, decoder


def _python_functions(profile: cProfile.Profile, passes: int) -> list[dict[str, Any]]:
    """The functions with the most self time, ONNX Runtime's run calls left out (microseconds per pass)."""
    stats = pstats.Stats(profile)
    rows = []
    for (file, line, name), (_, _, self_time, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        if "onnxruntime" in file or name in (
            "run",
            "<built-in method onnxruntime.capi.onnxruntime_pybind11_state.run>",
        ):
            continue
        where = f"{Path(file).name}:{line}({name})" if line else name
        rows.append({"function": where, "us_per_pass": self_time / max(passes, 1) * 1e6})
    rows.sort(key=lambda row: -row["us_per_pass"])
    return rows[:TOP_FUNCTIONS]


def measure(engine: Engine, sources: list[list[int]], strategy: str, batch: int) -> tuple[dict[str, Any], dict]:
    """A timed decode of ``sources`` (after a warm-up batch), one recording what the sessions are fed and one
    under ``cProfile``: the row, and the recorded feeds."""
    _decode_all(engine, sources[:batch], strategy, batch)
    wall, timed_encoder, timed_decoder = _watched(engine, sources, strategy, batch, recording=False)
    _, recorded_encoder, recorded_decoder = _watched(engine, sources, strategy, batch, recording=True)
    profile = cProfile.Profile()
    profile.runcall(_decode_all, engine, sources, strategy, batch)
    n, runs = len(sources), timed_decoder.runs
    python_s = max(wall - timed_decoder.seconds - timed_encoder.seconds, 0.0)
    row = {
        "strategy": strategy,
        "batch": batch,
        "sent_per_s": n / wall,
        "ms_per_sent": wall / n * 1e3,
        "encoder_ms": timed_encoder.seconds / n * 1e3,
        "decoder_ms": timed_decoder.seconds / n * 1e3,
        "python_ms": python_s / n * 1e3,
        "passes_per_sent": runs / n,
        "run_us_per_pass": timed_decoder.seconds / max(runs, 1) * 1e6,
        "python_us_per_pass": python_s / max(runs, 1) * 1e6,
        "python_functions": _python_functions(profile, runs),
    }
    return row, {"encoder": recorded_encoder.feeds, "decoder": recorded_decoder.feeds}


def op_shares(graph: Path, feeds: list[dict[str, np.ndarray]], runtime: RuntimeOptions) -> list[dict[str, Any]]:
    """Replay ``feeds`` (at most ``REPLAYED``, spread over the run) through ``graph`` with ONNX Runtime's profiler:
    each operator type's share of the kernel time, largest first."""
    picks = np.unique(np.linspace(0, len(feeds) - 1, min(REPLAYED, len(feeds))).round().astype(int))
    with tempfile.TemporaryDirectory() as tmp:
        session = create_inference_session(graph, runtime, profile_prefix=Path(tmp) / "profile")
        for i in picks:
            session.run(None, feeds[i])
        events = json.loads(Path(session.end_profiling()).read_text())
    kernel = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            kernel[event["args"]["op_name"]] += event["dur"]
    total = sum(kernel.values()) or 1
    return [{"op_type": op, "share": micros / total} for op, micros in kernel.most_common()]


def _fed_as(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``feeds`` as ``session`` takes them: per-layer cache inputs stacked back into the whole ones it may take."""
    names = {value.name for value in session.get_inputs()}
    out = {name: array for name, array in feeds.items() if name in names}
    for whole, prefix in LAYER_INPUTS.items():
        if whole in names:
            layers = sum(1 for name in feeds if name.startswith(f"{prefix}_key_"))
            out[whole] = np.stack(
                [np.stack([feeds[layer_input(prefix, layer, kind)] for kind in (0, 1)]) for layer in range(layers)]
            )
    return out


def replay_against(
    graphs: tuple[Path, Path], feeds: list[dict[str, np.ndarray]], runtime: RuntimeOptions
) -> dict[str, Any]:
    """``feeds`` through both graphs alternately (chunks of 10, ``ROUNDS`` rounds, the order swapped each chunk):
    microseconds a run of each, the speedup of the first over the second, and whether their outputs are equal."""
    sessions = [create_inference_session(graph, runtime) for graph in graphs]
    fed = [[_fed_as(session, f) for f in feeds] for session in sessions]
    identical = all(
        np.array_equal(a, b)
        for i in range(min(20, len(feeds)))
        for a, b in zip(sessions[0].run(None, fed[0][i]), sessions[1].run(None, fed[1][i]), strict=True)
    )
    seconds = [0.0, 0.0]
    for round_ in range(ROUNDS):
        for chunk in range(0, len(feeds), 10):
            for which in (0, 1) if (round_ + chunk // 10) % 2 else (1, 0):
                start = time.perf_counter()
                for f in fed[which][chunk : chunk + 10]:
                    sessions[which].run(None, f)
                seconds[which] += time.perf_counter() - start
    runs = ROUNDS * len(feeds)
    return {
        "runs": len(feeds),
        "us_per_run": seconds[0] / runs * 1e6,
        "other_us_per_run": seconds[1] / runs * 1e6,
        "speedup": seconds[1] / seconds[0],
        "identical": identical,
    }


def ct2_rows(hf_dir: Path, sources: list[list[int]], batches: list[int], eos: str) -> list[dict[str, Any]]:
    """CTranslate2 int8 greedy on ``sources``: in all, with one decoding step, and per further step."""
    from bench.engine.peer_ct2 import CT2Greedy

    peer = CT2Greedy(hf_dir)
    rows = []
    for batch in batches:
        timings = {}
        for label, length in (("one_step", 1), ("all", 256)):
            peer.generate(sources[:batch], eos, length)
            start = time.perf_counter()
            steps = 0
            for i in range(0, len(sources), batch):
                outputs = peer.generate(sources[i : i + batch], eos, length)
                steps += max(len(o) for o in outputs) + 1
            timings[label] = (time.perf_counter() - start, steps)
        (all_s, steps), (one_s, _) = timings["all"], timings["one_step"]
        batches_run = -(-len(sources) // batch)
        rows.append(
            {
                "strategy": "ct2-greedy",
                "batch": batch,
                "sent_per_s": len(sources) / all_s,
                "ms_per_sent": all_s / len(sources) * 1e3,
                "encoder_and_one_step_ms": one_s / len(sources) * 1e3,
                "passes_per_sent": steps * batch / len(sources),
                "step_us": (all_s - one_s) / max(steps - batches_run, 1) * 1e6,
            }
        )
    return rows


def run(args: argparse.Namespace, progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    runtime = RuntimeOptions(provider="cpu", intra_op_threads=args.threads)
    engine = Engine(args.model, options=runtime)
    files = engine.manifest.variants[engine.model.variant]
    sources = load_sources(engine, args.input, args.limit)
    sources.sort(key=len)  # as the service batches: sentences of similar length together
    rows, ops, against = [], [], []
    other = ModelManifest.load(args.against).variants[engine.model.variant] if args.against else None
    for strategy in args.strategies:
        for batch in args.batch_size:
            progress(f"{strategy}, batch {batch}: decoding")
            row, feeds = measure(engine, sources, strategy, batch)
            rows.append(row)
            progress(f"{strategy}, batch {batch}: replaying {len(feeds['decoder'])} passes through the profiler")
            for graph in ("encoder", "decoder"):
                shares = op_shares(args.model / files[graph], feeds[graph], runtime)
                ops += [{"graph": graph, "strategy": strategy, "batch": batch, **share} for share in shares]
                if other is not None:
                    pair = (args.model / files[graph], args.against / other[graph])
                    result = replay_against(pair, feeds[graph], runtime)
                    against.append({"graph": graph, "strategy": strategy, "batch": batch, **result})
    peer = []
    if args.peer_ct2:
        progress("CTranslate2")
        eos = engine.codec.tokenizer.id_to_token(engine.manifest.eos_token_id)
        peer = ct2_rows(args.peer_ct2, sources, args.batch_size, eos)
    return {
        "model": str(args.model),
        "input": str(args.input),
        "sentences": len(sources),
        "rows": rows,
        "operators": ops,
        "against": {"model": str(args.against), "rows": against} if args.against else None,
        "peer": peer,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench profile", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--input", type=Path, required=True, help="one sentence per line (natural text)")
    parser.add_argument("--limit", type=int, default=300, help="first N sentences")
    parser.add_argument("--batch-size", type=lambda s: csv_list(s, int), default=[1, 16])
    parser.add_argument("--strategies", type=csv_list, default=["greedy", "aggressive"])
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--peer-ct2", type=Path, default=None, help="HF checkpoint dir for the CTranslate2 rows")
    parser.add_argument("--against", type=Path, default=None, help="another folder of the same weights to replay")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(args, lambda line: print(f"bench profile: {line}", file=sys.stderr))
    print(f"\n{result['sentences']} sentences from {args.input}, model {args.model}")
    print(table(result["rows"], COLUMNS))
    for row in result["rows"]:
        functions = ", ".join(f"{f['function']} {f['us_per_pass']:.0f}" for f in row["python_functions"])
        print(f"  {row['strategy']} batch {row['batch']}, Python us/pass: {functions}")
    print("\nkernel time by operator type (ONNX Runtime's profiler), top of each graph:")
    shown: collections.Counter[tuple[str, str, int]] = collections.Counter()
    top = []
    for op in result["operators"]:
        key = (op["graph"], op["strategy"], op["batch"])
        shown[key] += 1
        if shown[key] <= TOP_OPS:
            top.append(op)
    print(table(top, OP_COLUMNS))
    if result["against"]:
        print(f"\nreplayed against {args.against} (speedup: its time over this model's):")
        print(table(result["against"]["rows"], AGAINST_COLUMNS))
    if result["peer"]:
        print("\nCTranslate2 int8 greedy, same sentences:")
        print(table(result["peer"], PEER_COLUMNS))
    if args.json:
        write_json(args.json, result)
    return 0
