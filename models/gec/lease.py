"""Train the recipe's larger model on a lent GPU machine in one command that fits the lease, and take it back.

On the machine (the device tool runs it in a copy of the working tree; ``.gpu/`` carried)::

    python3 -m models.gec.lease train --bundle .gpu/bundle --run /tmp/lease --out $OUT --deadline-minutes 9

Here, with the files it returned::

    python -m models.gec.lease receive --returned /work/.device/... --run runs/gec-v5
    python -m models.gec.package --run runs/gec-v5 --out models/gec-v5 --version 5 --data ../shared/data

``train`` reads a bundle (``models.gec.bundle``: monolingual sentences, learner pairs, misspellings, tokenizer),
corrupts and packs its sentences on all the machine's cores, then trains from scratch in the pre-norm layout:
stage 1 on synthetic errors (each sentence corrupted ``--noisings`` times, with different seeds) plus the learner
pairs twice, stage 2 on version 4's kind of mixture (``models.gec.mixture``: the learner pairs, identity pairs of
clean text, synthetic errors of the classes the model misses). The stages share what is left of
``--deadline-minutes`` after the preparation, in the ``gpu-lease`` schedule's proportion, so the command ends on
time however fast the preparation ran. It writes a run folder as ``models.gec.recipe`` does and, under ``--out``,
what comes back: the final model in float16 shards under 16 MiB and the run's records (``run.tar.gz``).
``receive`` rebuilds the run folder here, the weights in float32, for ``models.gec.package``.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import sys
import tarfile
import time
from pathlib import Path

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForSeq2SeqLM

from models.gec.bundle import LEARNER, MISSPELLINGS, SENTENCES, SUMMARY, TOKENIZER
from models.gec.dataset import PackedPairs, pack_pairs
from models.gec.prepare import TARGETED_WEIGHTS, corrupt_sentences
from models.gec.schedule import SCHEDULES, stage_settings
from models.gec.train import TrainConfig, train

SCHEDULE = "gpu-lease"
RECORDS = "run.tar.gz"
SHARD = "16MB"  # 16,000,000 bytes: the device tool returns files of at most 16 MiB (16,777,216)
MAX_LEN = 128


def _read_bundle(bundle: Path) -> tuple[list[str], list[tuple[str, str, str]], dict[str, list[str]], Tokenizer]:
    sentences = lzma.decompress((bundle / SENTENCES).read_bytes()).decode().split("\n")
    rows = lzma.decompress((bundle / LEARNER).read_bytes()).decode().split("\n")
    learner = [(origin, src, tgt) for origin, src, tgt in (row.split("\t") for row in rows)]
    misspellings = json.loads(lzma.decompress((bundle / MISSPELLINGS).read_bytes()))
    tokenizer = Tokenizer.from_file(str(bundle / TOKENIZER))
    tokenizer.post_processor = None
    return sentences, learner, misspellings, tokenizer


def prepare_lease(bundle: Path, run: Path, noisings: int, identity: int, targeted: int, seed: int) -> dict:
    """Write ``tokenizer.json``, ``stage1.npz``, ``stage2.npz`` and ``data.json`` to ``run`` from ``bundle``."""
    run.mkdir(parents=True, exist_ok=True)
    sentences, learner, misspellings, tokenizer = _read_bundle(bundle)
    tokenizer.save(str(run / "tokenizer.json"))
    workers = os.cpu_count() or 2
    copies, marked, synthetic = (
        sentences[:identity],
        sentences[identity : identity + targeted],
        sentences[identity + targeted :],
    )
    noisy = [corrupt_sentences(synthetic, seed + k, misspellings, workers) for k in range(noisings)]
    marked_noisy = corrupt_sentences(marked, seed + noisings, misspellings, workers, 0.0, TARGETED_WEIGHTS)
    learner_packed = pack_pairs(tokenizer, [src for _, src, _ in learner], [tgt for _, _, tgt in learner], MAX_LEN)
    synthetic_packed = [pack_pairs(tokenizer, sources, synthetic, MAX_LEN) for sources in noisy]
    PackedPairs.concat([*synthetic_packed, learner_packed, learner_packed]).save(run / "stage1.npz")
    clean_text = pack_pairs(tokenizer, copies + marked_noisy, copies + marked, MAX_LEN)  # identity, then targeted
    mixture = PackedPairs.concat([learner_packed, clean_text])  # the learner pairs as packed once above
    mixture.save(run / "stage2.npz")
    summary = {
        "bundle": json.loads((bundle / SUMMARY).read_text()),
        "learner_pairs": len(learner_packed),
        "synthetic_pairs": sum(len(part) for part in synthetic_packed),
        "noisings": noisings,
        "synthetic_unchanged_share": round(
            sum(n == c for sources in noisy for n, c in zip(sources, synthetic, strict=True))
            / max(1, noisings * len(synthetic)),
            4,
        ),
        "stage1_pairs": sum(len(part) for part in synthetic_packed) + 2 * len(learner_packed),
        "stage2_pairs": len(mixture),
        "mixture": {"learner": len(learner), "identity": len(copies), "targeted": len(marked)},
        "stage_data": {
            "stage1": f"synthetic errors ({noisings} corruptions of each sentence) + learner pairs (x2)",
            "stage2": "learner pairs + identity pairs of clean text + synthetic errors of the classes the model misses",
        },
        "vocab_size": tokenizer.get_vocab_size(),
        "max_len": MAX_LEN,
        "seed": seed,
        "workers": workers,
    }
    (run / "data.json").write_text(json.dumps(summary, indent=2))
    return summary


def train_lease(args: argparse.Namespace) -> None:
    """Prepare, train both stages within the deadline, and write what comes back to ``args.out``."""
    started = time.monotonic()
    run: Path = args.run
    summary = prepare_lease(args.bundle, run, args.noisings, args.identity, args.targeted, args.seed)
    prepared_minutes = (time.monotonic() - started) / 60
    print(f"prepared in {prepared_minutes:.2f} min: {json.dumps(summary)}", file=sys.stderr)
    minutes1, minutes2, preset, max_tokens = SCHEDULES[SCHEDULE]
    left = args.deadline_minutes - prepared_minutes - args.reserve_minutes
    scale = max(0.05, left) / (minutes1 + minutes2)
    minutes1, minutes2 = minutes1 * scale, minutes2 * scale
    device = args.device
    gpu = torch.cuda.get_device_name() if device.startswith("cuda") else None
    (run / "recipe.json").write_text(
        json.dumps(
            {
                "command": "python -m models.gec.lease " + " ".join(sys.argv[1:]),
                "schedule": SCHEDULE,
                "stage1_minutes": round(minutes1, 2),
                "stage2_minutes": round(minutes2, 2),
                "preparation_minutes": round(prepared_minutes, 2),
                "preset": args.preset or preset,
                "max_tokens": max_tokens,
                "gpu": gpu,
                "torch": torch.__version__,
            },
            indent=2,
        )
    )
    common = {
        "preset": args.preset or preset,
        "vocab_size": summary["vocab_size"],
        "device": device,
        "max_tokens": max_tokens,
        "bf16": True,
        "compile": False,
    }
    # One checkpoint, at the end, and no snapshots: the lease is shorter than any stretch between checkpoints.
    once = {"checkpoint_minutes": 60.0, "keep_snapshots": 0}
    for name, specific in stage_settings(minutes1, minutes2, run, None, args.seed).items():
        config = TrainConfig(data=str(run / f"{name}.npz"), out=str(run / name), **(common | specific | once))
        train(config, resume=False)
        send_back(run, name, args.out)  # stage 1's model comes back even if stage 2 does not finish in time
    print(f"done in {(time.monotonic() - started) / 60:.2f} min", file=sys.stderr)


def send_back(run: Path, stage: str, out: Path) -> None:
    """``stage``'s model as float16 shards under ``out/model`` (replacing an earlier stage's) and the run's records
    as ``out/run.tar.gz``."""
    model = AutoModelForSeq2SeqLM.from_pretrained(run / stage / "model")
    shutil.rmtree(out / "model", ignore_errors=True)
    model.half().save_pretrained(out / "model", max_shard_size=SHARD)
    with tarfile.open(out / RECORDS, "w:gz") as tar:
        for path in sorted(run.rglob("*")):
            if path.is_file() and (path.suffix in (".json", ".jsonl") and "model" not in path.parts):
                tar.add(path, arcname=str(path.relative_to(run)))


def receive(returned: Path, run: Path) -> None:
    """Rebuild the run folder from what ``send_back`` wrote: its records, and the last stage's model in float32 (stage
    2's; stage 1's where stage 2 did not finish, which the records show: no ``stage2/summary.json``)."""
    run.mkdir(parents=True, exist_ok=True)
    with tarfile.open(returned / RECORDS) as tar:
        tar.extractall(run, filter="data")
    stage = "stage2" if (run / "stage2" / "summary.json").exists() else "stage1"
    model = AutoModelForSeq2SeqLM.from_pretrained(returned / "model", dtype=torch.float32)
    model.save_pretrained(run / stage / "model")
    print(f"{stage}'s model -> {run / stage / 'model'}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    on_machine = verbs.add_parser("train", help="on the lent machine: prepare, train, write what comes back")
    on_machine.add_argument("--bundle", type=Path, required=True)
    on_machine.add_argument("--run", type=Path, required=True)
    on_machine.add_argument("--out", type=Path, required=True)
    on_machine.add_argument("--device", default="cuda")
    on_machine.add_argument("--deadline-minutes", type=float, default=9.0, help="the whole command's wall time")
    on_machine.add_argument("--reserve-minutes", type=float, default=0.6, help="kept for saving and sending back")
    on_machine.add_argument("--noisings", type=int, default=2)
    on_machine.add_argument("--identity", type=int, default=50_000)
    on_machine.add_argument("--targeted", type=int, default=80_000)
    on_machine.add_argument("--seed", type=int, default=1)
    on_machine.add_argument("--preset", default=None, help="another size than the schedule's (a rehearsal here)")
    here = verbs.add_parser("receive", help="here: rebuild the run folder from the returned files")
    here.add_argument("--returned", type=Path, required=True)
    here.add_argument("--run", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.verb == "train":
        train_lease(args)
    else:
        receive(args.returned, args.run)


if __name__ == "__main__":
    main()
