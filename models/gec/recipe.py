"""One command that rebuilds the default model from the data directory.

``python -m models.gec.recipe --data ../shared/data --run runs/gec-default --device cpu``

Stages (each skipped when its output exists, so an interrupted run continues with
``--resume``): prepare (tokenizer, synthetic errors, packed sets), stage 1 training on
synthetic + learner pairs, stage 2 fine-tuning on learner pairs.

``--init CHECKPOINT`` continues a trained model instead of starting from scratch (``models.gec.unpack``
gives the shipped one back): its tokenizer is kept, stage 1 starts from its weights on fresh synthetic
errors (``--seed``) at a lower learning rate, and training can run in several stretches; with
``--schedule cpu-finetune`` stage 1 is skipped and stage 2 fine-tunes it on the learner pairs; with
``--schedule cpu-mixture`` on ``models.gec.mixture``'s set instead (``--teacher``, ``--exclude``, ``--identity``,
``--targeted``). Every checkpoint's weights are kept (``snapshots/``), so dev figures can be plotted by training
hour and the last checkpoints averaged (``models.gec.average``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from models.gec.mixture import prepare_mixture
from models.gec.prepare import prepare
from models.gec.schedule import SCHEDULES, stage_settings
from models.gec.train import TrainConfig, train
from service.engine.tokenization import TOKENIZER_CONFIG


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the GEC data directory (../shared/data)")
    parser.add_argument("--run", type=Path, required=True, help="working directory for this run")
    parser.add_argument("--device", default="cpu", help="torch device: cpu, cuda")
    parser.add_argument(
        "--schedule",
        choices=sorted(SCHEDULES),
        default=None,
        help="time budget and size preset (default: cpu-session, or gpu for a cuda device)",
    )
    parser.add_argument("--synthetic", type=int, default=500_000, help="synthetic pairs to make")
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--init", type=Path, default=None, help="a trained checkpoint to continue")
    parser.add_argument("--teacher", type=Path, help="cpu-mixture: the flagged.tsv of models.gec.teacher")
    parser.add_argument("--exclude", type=Path, help="cpu-mixture: the clean set's TSV (models.gec.clean_set)")
    parser.add_argument("--identity", type=int, default=50_000, help="cpu-mixture: identity pairs of clean text")
    parser.add_argument("--targeted", type=int, default=80_000, help="cpu-mixture: targeted synthetic pairs")
    args = parser.parse_args(argv)
    schedule = args.schedule or (
        "gpu" if args.device.startswith("cuda") else "cpu-continue" if args.init else "cpu-session"
    )
    minutes1, minutes2, preset, max_tokens = SCHEDULES[schedule]
    if minutes1 == 0 and args.init is None:
        parser.error(f"--schedule {schedule} fine-tunes a trained model: give it --init")
    if schedule == "cpu-mixture" and (args.teacher is None or args.exclude is None):
        parser.error("--schedule cpu-mixture needs --teacher and --exclude")
    run: Path = args.run
    run.mkdir(parents=True, exist_ok=True)
    (run / "recipe.json").write_text(
        json.dumps(
            {
                "command": "python -m models.gec.recipe " + " ".join(sys.argv[1:] if argv is None else argv),
                "schedule": schedule,
                "stage1_minutes": minutes1,
                "stage2_minutes": minutes2,
                "preset": preset,
                "max_tokens": max_tokens,
            },
            indent=2,
        )
    )

    if not (run / "data.json").exists() and schedule == "cpu-mixture":
        summary = prepare_mixture(
            args.data, run, args.init / "tokenizer.json", args.teacher, args.exclude, args.identity, args.targeted,
            args.seed,
        )  # fmt: skip
        print(json.dumps(summary), file=sys.stderr)
    if not (run / "data.json").exists():
        tokenizer = args.init / "tokenizer.json" if args.init else None
        summary = prepare(
            args.data, run, args.synthetic, args.vocab_size, args.seed, tokenizer_path=tokenizer, stage1=bool(minutes1)
        )
        print(json.dumps(summary), file=sys.stderr)
    vocab = json.loads((run / "data.json").read_text())["vocab_size"]
    common = {
        "preset": preset,
        "vocab_size": vocab,
        "device": args.device,
        "max_tokens": max_tokens,
        "bf16": True,
        "compile": False,  # did not pay for itself on 2 cores
    }
    stages = stage_settings(minutes1, minutes2, run, args.init, args.seed)
    for name, specific in stages.items():
        if not (run / name / "model").exists():
            config = TrainConfig(data=str(run / f"{name}.npz"), out=str(run / name), **common, **specific)
            train(config, args.resume)
    final = run / "hf"
    if not final.exists():
        shutil.copytree(run / "stage2" / "model", final)
        shutil.copy(run / "tokenizer.json", final / "tokenizer.json")
        # Load as the generic fast tokenizer: mBART's own class rejects a byte-level BPE vocabulary.
        (final / "tokenizer_config.json").write_text(json.dumps(TOKENIZER_CONFIG, indent=2))
    print(f"trained model: {final}", file=sys.stderr)


if __name__ == "__main__":
    main()
