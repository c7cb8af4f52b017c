"""``gecserve bench decoding``: decoding strategies compared on the same model in one run.

    gecserve bench decoding --model models/gec-default --input dev.txt \\
        [--batch-size 1,8,32] [--strategies greedy,aggressive,relaxed,unsplit,encoder,oracle,beam] \\
        [--cache compact,masked] [--threads 1] [--limit N] [--order length|input] [--peer-ct2 HF_DIR] [--json OUT]

``--arrivals RATES`` replays a Poisson stream of sentences through the service's batcher instead
(``bench.engine.arrivals``). For each strategy, cache layout and batch size: sentences/s,
per-sentence latency (mean, p50, p95, p99; a sentence's latency is its batch's wall time),
decoder passes per sentence, tokens accepted per pass, speedup over greedy measured in the same
run, and how many outputs are identical to greedy's. Where aggressive and greedy outputs differ, the first differing
position's top-1/top-2 logit gap in the greedy run is reported: a numeric near-tie is
counted, never hidden. ``relaxed`` is aggressive decoding with the lossy, opt-in relaxed
verification (``--relaxed-top-k``, ``--min-block``); its identical-to-greedy count says how far
it strays. ``unsplit`` is aggressive decoding with one padded pass per step (``pass_cost`` 0),
to compare with the split passes a CPU makes by default. ``encoder`` runs the encoder alone on
the same batches: the share of every strategy's time that no decoding can save. ``oracle`` is the
upper bound on what exact aggressive decoding can reach here: the encoder and one decoder pass per
batch that verifies a draft already equal to greedy's output; where it is under 2x greedy, no draft
strategy can reach 2x on this machine and model.
``--peer-ct2`` adds CTranslate2 int8 greedy on the same weights.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.engine.arrivals import COLUMNS as ARRIVAL_COLUMNS
from bench.engine.arrivals import run_arrivals
from bench.latency import latency_summary
from service.batching import BatchPolicy
from service.engine.decoding.params import DecodeParams
from service.engine.engine import STRATEGIES, Engine
from service.engine.model import Seq2SeqModel, pad_rows
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions

# Rows that are aggressive decoding with other knobs (see the module docstring).
VARIANTS = ("relaxed", "unsplit")

COLUMNS = [
    "strategy",
    "cache",
    "batch",
    "sent_per_s",
    "mean_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "passes_per_sent",
    "tokens_per_pass",
    "speedup_vs_greedy",
    "identical_to_greedy",
    "flips",
]


def csv_list(text: str, kind: Callable[[str], Any] = str) -> list[Any]:
    """A command-line list, ``a,b,c``, each item read by ``kind``."""
    return [kind(x) for x in text.split(",") if x]


def decode_params(args: argparse.Namespace, seed: int | None = None) -> DecodeParams:
    """The decoding knobs the command line sets (both modes)."""
    return DecodeParams(
        num_beams=args.num_beams,
        seed=seed,
        max_draft=args.max_draft,
        max_guess=args.max_guess,
        pass_cost=args.pass_cost,
    )


def load_sources(engine: Engine, path: Path, limit: int | None) -> list[list[int]]:
    """Non-empty lines of ``path`` tokenized; lines over the model maximum are skipped."""
    lines = [line.rstrip("\n") for line in path.open(encoding="utf-8") if line.strip()]
    ids = [s for s in engine.codec.encode_batch(lines) if 0 < len(s) <= engine.max_source_tokens]
    return ids[:limit] if limit else ids


def timed_run(
    generate: Callable[[list[Any]], list[Any]],
    sources: list[Any],
    batch_size: int,
    progress: tqdm,
    warmup: int = 2,
) -> tuple[list[Any], list[float], float]:
    """Outputs, per-sentence latencies, total seconds; the first ``warmup`` batches run twice."""
    batches = [sources[i : i + batch_size] for i in range(0, len(sources), batch_size)]
    for batch in batches[:warmup]:
        generate(batch)
    outputs: list[Any] = []
    latencies: list[float] = []
    total = 0.0
    for batch in batches:
        started = time.perf_counter()
        outputs.extend(generate(batch))
        elapsed = time.perf_counter() - started
        total += elapsed
        latencies.extend([elapsed] * len(batch))
        progress.update(len(batch))
    return outputs, latencies, total


def first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def flip_report(
    engine: Engine, sources: list[list[int]], reference: list[list[int]], outputs: list[list[int]], params: DecodeParams
) -> list[dict[str, Any]]:
    """For each output that differs from greedy: where, and greedy's logit gap there."""
    flips = []
    for index, (ref, out) in enumerate(zip(reference, outputs, strict=True)):
        if ref == out:
            continue
        position = first_difference(ref, out)
        traced = engine.generate([sources[index]], "greedy", replace(params, record_gaps=True))[0]
        gap = traced.gaps[position] if position < len(traced.gaps) else None
        flips.append({"sentence": index, "position": position, "greedy_logit_gap": gap})
    return flips


def oracle_pass(model: Seq2SeqModel, batch: list[tuple[list[int], list[int], bool]]) -> list[list[int]]:
    """The least work an exact aggressive decoding can do on ``batch``, rows of ``(source, greedy's
    output, whether greedy ended it with </s>)``: the encoder, then one decoder pass feeding each row
    the decoder prefix and greedy's output (with ``</s>`` where greedy ended), padded to the longest,
    and the argmax over it, as a verifying pass whose draft was exactly right.

    Returns each row's output as that pass verifies it: the argmax at the draft's positions, up to
    ``</s>``; it equals greedy's output where the verification reproduced it."""
    m = model.manifest
    state = model.start([source for source, _, _ in batch])
    drafts = [[*output, m.eos_token_id] if ended else output for _, output, ended in batch]
    rows = [[*m.decoder_prefix_ids, *draft] for draft in drafts]
    tokens, counts = pad_rows(rows, m.pad_token_id)
    chosen = state.step(tokens, counts).argmax(-1)
    base = len(m.decoder_prefix_ids) - 1  # the position whose argmax is the first output token
    outputs = []
    for i, draft in enumerate(drafts):
        verified = chosen[i, base : base + len(draft)].tolist()
        outputs.append(verified[: verified.index(m.eos_token_id)] if m.eos_token_id in verified else verified)
    return outputs


@dataclass
class _Decoded:
    """One configuration's decode of every source: outputs, and what the table counts of it."""

    tokens: list[list[int]]
    latencies: list[float]
    total: float
    passes: list[int]
    accepted: int
    ended: list[bool]  # whether each output ended with </s> (greedy's feed the oracle)


class _Run:
    """Every configuration of one ``bench decoding`` run, greedy first: each row compares with greedy's outputs
    and time at the same cache layout and batch size."""

    def __init__(self, args: argparse.Namespace, progress: tqdm) -> None:
        self.args = args
        self.progress = progress
        self.runtime = RuntimeOptions(
            provider=args.provider, intra_op_threads=args.threads, spinning=args.spinning, io_binding=args.io_binding
        )
        self.engines = {
            cache: Engine(args.model, variant=args.variant, options=self.runtime, cache=cache) for cache in args.cache
        }
        self.sources = load_sources(next(iter(self.engines.values())), Path(args.input), args.limit)
        if args.order == "length":  # batches of similar lengths, as the service's batcher forms them
            self.sources.sort(key=len)
        self.params = decode_params(args)
        self.variants = {
            "relaxed": replace(self.params, relaxed_top_k=args.relaxed_top_k, min_block=args.min_block),
            "unsplit": replace(self.params, pass_cost=0.0),
        }
        self.peer = None
        if args.peer_ct2:
            from bench.engine.peer_ct2 import CT2Greedy

            self.peer = CT2Greedy(Path(args.peer_ct2), threads=args.threads)
        self.greedy: dict[tuple[str, int], _Decoded] = {}

    def configs(self) -> list[tuple[str, str, int]]:
        strategies = ["greedy"] + [s for s in self.args.strategies if s != "greedy"]
        configs = [(s, c, b) for b in self.args.batch_size for c in self.args.cache for s in strategies]
        return configs + ([("ct2-greedy", "-", b) for b in self.args.batch_size] if self.peer is not None else [])

    def greedy_at(self, cache: str, batch: int) -> _Decoded:
        """Greedy's decode at this cache layout (the first layout's for the peer) and batch size."""
        return self.greedy.get((cache, batch)) or self.greedy[(self.args.cache[0], batch)]

    def row(self, strategy: str, cache: str, batch: int) -> dict[str, Any]:
        sources = self.sources
        if strategy == "encoder":
            engine = self.engines[cache]
            _, latencies, total = timed_run(
                lambda b, e=engine: [e.model.encode(b)] * len(b), sources, batch, self.progress
            )
            speedup = {"speedup_vs_greedy": self.greedy_at(cache, batch).total / total, "flip_details": []}
            return {"strategy": strategy, "cache": cache, "batch": batch, "sent_per_s": len(sources) / total} | (
                latency_summary(latencies) | speedup
            )
        decoded = self._decode(strategy, cache, batch)
        if strategy == "greedy":
            self.greedy[(cache, batch)] = decoded
        reference = self.greedy_at(cache, batch)
        identical = sum(a == b for a, b in zip(decoded.tokens, reference.tokens, strict=True))
        flips = []
        if strategy == "aggressive" and identical < len(sources):
            flips = flip_report(self.engines[cache], sources, reference.tokens, decoded.tokens, self.params)
        return {
            "strategy": strategy,
            "cache": cache,
            "batch": batch,
            "sent_per_s": len(sources) / decoded.total,
            **latency_summary(decoded.latencies),
            "passes_per_sent": sum(decoded.passes) / len(sources),
            "tokens_per_pass": decoded.accepted / max(1, sum(decoded.passes)),
            "speedup_vs_greedy": reference.total / decoded.total,
            "identical_to_greedy": f"{identical}/{len(sources)}",
            "flips": len(flips),
            "flip_details": flips,
        }

    def _decode(self, strategy: str, cache: str, batch: int) -> _Decoded:
        sources, progress = self.sources, self.progress
        if strategy == "ct2-greedy":
            assert self.peer is not None
            tokens, latencies, total = timed_run(self.peer.generate, sources, batch, progress)
            passes = [len(t) + 1 for t in tokens]
            return _Decoded(tokens, latencies, total, passes, sum(passes), [True] * len(tokens))
        engine = self.engines[cache]
        if strategy == "oracle":
            # each sentence with greedy's output, batched by timed_run as greedy's run batched it
            greedy = self.greedy[(cache, batch)]
            work = list(zip(sources, greedy.tokens, greedy.ended, strict=True))
            tokens, latencies, total = timed_run(lambda b, e=engine: oracle_pass(e.model, b), work, batch, progress)
            accepted = sum(len(output) + ended for _, output, ended in work)  # the draft, </s> included
            return _Decoded(tokens, latencies, total, [1] * len(sources), accepted, greedy.ended)

        def generate(batch_sources: list[list[int]]) -> list[Any]:
            if strategy in VARIANTS:
                return engine.generate(batch_sources, "aggressive", self.variants[strategy])
            return engine.generate(batch_sources, strategy, self.params)

        outputs, latencies, total = timed_run(generate, sources, batch, progress)
        tokens = [r.tokens for r in outputs]
        accepted = sum(sum(r.accepted) for r in outputs)
        return _Decoded(tokens, latencies, total, [r.passes for r in outputs], accepted, [r.finished for r in outputs])


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every configuration's row (see the module docstring), and what the run measured on."""
    with tqdm(desc="bench decoding", unit="sent", file=sys.stderr) as progress:
        bench = _Run(args, progress)
        configs = bench.configs()
        progress.reset(total=len(configs) * len(bench.sources))
        rows = []
        for strategy, cache, batch in configs:
            progress.set_postfix(strategy=strategy, cache=cache, batch=batch)
            rows.append(bench.row(strategy, cache, batch))
    return {
        "model": str(args.model),
        "variant": next(iter(bench.engines.values())).model.variant,
        "input": str(args.input),
        "sentences": len(bench.sources),
        "threads": args.threads,
        "order": args.order,
        "provider": bench.runtime.providers()[0],
        "mean_source_tokens": sum(map(len, bench.sources)) / len(bench.sources),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench decoding", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--input", type=Path, required=True, help="one sentence per line (natural text)")
    parser.add_argument("--batch-size", type=lambda s: csv_list(s, int), default=[1, 8, 32])
    parser.add_argument(
        "--strategies",
        type=csv_list,
        default=["greedy", "aggressive", "beam"],
        help="rows: greedy (always run, first), aggressive, relaxed, unsplit, beam; encoder (the encoder alone) and "
        "oracle (the encoder and one decoder pass verifying greedy's output: the most exact aggressive decoding "
        "can reach)",
    )
    parser.add_argument("--cache", type=csv_list, default=["compact"], help="cache layouts: compact,masked")
    parser.add_argument("--variant", default=None, help="model variant (default: the manifest's)")
    parser.add_argument("--threads", type=int, default=1, help="ORT intra-op threads")
    parser.add_argument("--spinning", action="store_true")
    parser.add_argument("--provider", default="auto")
    parser.add_argument("--io-binding", default="auto", choices=["auto", "on", "off"])
    parser.add_argument("--num-beams", type=int, default=4)
    parser.add_argument("--max-draft", type=int, default=DecodeParams.max_draft, help="draft tokens per pass")
    parser.add_argument(
        "--max-guess", type=int, default=DecodeParams.max_guess, help="tokens drafted from a guess (0: none)"
    )
    parser.add_argument("--relaxed-top-k", type=int, default=2, help="'relaxed' row: accept draft tokens in top-k")
    parser.add_argument("--min-block", type=int, default=0, help="'relaxed' row: always accept this many")
    parser.add_argument("--limit", type=int, default=None, help="first N sentences only")
    parser.add_argument(
        "--order",
        choices=["length", "input"],
        default="length",
        help="batch sentences of similar length together (as the service does), or in input order",
    )
    parser.add_argument("--peer-ct2", type=Path, default=None, help="HF checkpoint dir for the CTranslate2 row")
    parser.add_argument(
        "--arrivals",
        type=lambda s: [float("inf") if x == "max" else float(x) for x in csv_list(s)],
        default=None,
        help="replay mode: arrival rates in sentences/s (max = all at once), through the service's batcher",
    )
    parser.add_argument(
        "--batching", type=csv_list, default=["closed", "continuous"], help="replay mode: closed,continuous"
    )
    parser.add_argument("--rounds", type=int, default=1, help="replay mode: runs of each configuration, interleaved")
    parser.add_argument(
        "--pass-cost", type=float, default=None, help="aggressive: split-pass cost (default: the device's; 0 = off)"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.arrivals:
        return replay_main(args)
    result = run(args)
    print(
        f"\n{result['sentences']} sentences from {args.input} (mean {result['mean_source_tokens']:.1f} tokens), "
        f"model {args.model} [{result['variant']}], {args.threads} thread(s), {result['provider']}"
    )
    print(table(result["rows"], COLUMNS))
    for row in result["rows"]:
        for flip in row["flip_details"]:
            print(
                f"  flip: {row['strategy']} batch {row['batch']} sentence {flip['sentence']} token {flip['position']}"
                f" greedy logit gap {flip['greedy_logit_gap']}"
            )
    if args.json:
        write_json(args.json, result)
    return 0


def replay_main(args: argparse.Namespace) -> int:
    """``--arrivals``: the replay mode (see ``bench.engine.arrivals``)."""
    runtime = RuntimeOptions(
        provider=args.provider, intra_op_threads=args.threads, spinning=args.spinning, io_binding=args.io_binding
    )
    engine = Engine(args.model, variant=args.variant, options=runtime, cache=args.cache[0])
    sources = load_sources(engine, Path(args.input), args.limit)
    params = decode_params(args, seed=0)
    policies = [BatchPolicy(max_batch_size=b, max_queue=len(sources) + 1, admit_within=0) for b in args.batch_size]
    strategies = args.strategies
    if not set(strategies) <= set(STRATEGIES):
        raise SystemExit(f"--arrivals replays the engine's strategies: {', '.join(STRATEGIES)}")
    configs = len(args.arrivals) * len(strategies) * len(args.batching) * len(policies) * args.rounds
    with tqdm(total=configs, desc="bench arrivals", unit="run", file=sys.stderr) as progress:

        def step(label: str) -> None:
            progress.set_postfix_str(label)
            progress.update(1)

        rows = run_arrivals(
            engine, sources, strategies, args.batching, args.arrivals, params, policies, args.rounds, step
        )
    result = {
        "model": str(args.model),
        "variant": engine.model.variant,
        "input": str(args.input),
        "sentences": len(sources),
        "rounds": args.rounds,
        "threads": args.threads,
        "provider": runtime.providers()[0],
        "rows": rows,
    }
    print(f"\n{len(sources)} sentences from {args.input}, {args.threads} thread(s)")
    print(table(rows, ARRIVAL_COLUMNS))
    if args.json:
        write_json(args.json, result)
    return 0
