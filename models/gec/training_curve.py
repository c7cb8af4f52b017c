"""Dev-set figures of a training run's checkpoints against training hours, with checkpoint averaging beside them.

    python -m models.gec.training_curve --run runs/gec-v3 --data ../shared/data --start runs/gec-default-hf \\
        --start-hours 1.83 --spelling-from models/gec-default [--every 2] [--average 3,5] [--json OUT] [--plot PNG]

Every kept snapshot of the run's stages (``models.gec.train --keep-snapshots``; every ``--every``-th, the last
always) is exported to ONNX (fp32, verified against PyTorch by the exporter) and corrects JFLEG dev and FCE dev as
served before the language model's review: the spelling stage of ``--spelling-from`` (a model folder with the same
tokenizer), the keep bias 0. ``--start`` is the checkpoint the run continued, trained ``--start-hours`` before.
``--average K`` also scores the average of stage 2's last K snapshots (``models.gec.average``). Results are kept
in the JSON as they come, so a rerun scores only new snapshots.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForSeq2SeqLM

from models.export.exporter import export
from models.gec.average import average_snapshots
from models.gec.compare_quality import DevSets
from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_speller
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions

STAGES = ("stage1", "stage2")


def snapshot_minutes(stage: Path) -> dict[int, float]:
    """Training minutes at each logged step of a stage (its ``train_log.jsonl``)."""
    minutes = {}
    for line in (stage / "train_log.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "minutes" in record:
            minutes[record["step"]] = record["minutes"]
    return minutes


def minutes_at(logged: dict[int, float], step: int) -> float:
    """The minutes at ``step``, from the nearest logged step at or before it (the log has one every 50 steps)."""
    before = [s for s in logged if s <= step]
    return logged[max(before)] if before else 0.0


def checkpoint_of(weights: dict[str, torch.Tensor], like: Path, tokenizer_from: Path, out: Path) -> Path:
    """A Hugging Face checkpoint folder of ``weights`` with the configuration of ``like`` and its tokenizer."""
    model = AutoModelForSeq2SeqLM.from_pretrained(like)
    model.load_state_dict(weights)
    model.save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tokenizer_from / name, out / name)
    return out


def figures(checkpoint: Path, sets: DevSets, spelling_from: Path, label: str, hours: float) -> dict[str, Any]:
    """Export ``checkpoint`` (fp32) and score it as served before the review."""
    with tempfile.TemporaryDirectory() as folder:
        model_dir = Path(folder) / "model"
        export(checkpoint, model_dir, quantize=None, keep_fp32=True)
        engine = Engine(model_dir, variant="fp32", options=RuntimeOptions(intra_op_threads=1))
        speller = model_speller(spelling_from)
        row = sets.row(
            label,
            lambda texts: [c.text for c in correct_texts(engine, texts, speller=speller, keep_bias=0.0)],
            hours=round(hours, 3),
        )
    return row


def curve(args: argparse.Namespace) -> list[dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if args.json and args.json.exists():
        done = {row["variant"]: row for row in json.loads(args.json.read_text())["rows"]}
    sets = DevSets(args.data)
    start_hours = args.start_hours
    points: list[tuple[str, float, Any]] = [("start", start_hours, None)]
    offset = 0.0
    for stage in STAGES:
        folder = args.run / stage
        if not (folder / "snapshots").is_dir():
            continue
        logged = snapshot_minutes(folder)
        paths = sorted((folder / "snapshots").glob("step-*.pt"))
        chosen = paths[:-1][:: args.every] + paths[-1:]
        for path in chosen:
            step = int(path.stem.split("-")[1])
            points.append((f"{stage} {path.stem}", start_hours + (offset + minutes_at(logged, step)) / 60, path))
        summary = folder / "summary.json"
        offset += json.loads(summary.read_text())["minutes"] if summary.exists() else max(logged.values(), default=0)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for label, hours, path in points:
            if label not in done:
                if path is None:
                    checkpoint = args.start
                else:
                    weights = torch.load(path, map_location="cpu", weights_only=True)
                    checkpoint = checkpoint_of(weights, args.start, args.start, Path(folder) / label.replace(" ", "-"))
                done[label] = figures(checkpoint, sets, args.spelling_from, label, hours)
                _save(args.json, done)
            rows.append(done[label])
        for count in args.average:
            label = f"stage2 average of the last {count}"
            if label not in done and (args.run / "stage2" / "snapshots").is_dir():
                out = Path(folder) / f"average-{count}"
                average_snapshots(args.run / "stage2", count, out)
                for name in ("tokenizer.json", "tokenizer_config.json"):
                    shutil.copy(args.start / name, out / name)
                done[label] = figures(out, sets, args.spelling_from, label, rows[-1]["hours"])
                _save(args.json, done)
            if label in done:
                rows.append(done[label])
    return rows


def _save(path: Path | None, done: dict[str, dict[str, Any]]) -> None:
    if path is not None:
        write_json(path, {"rows": list(done.values())})


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [row for row in rows if not row["variant"].startswith("stage2 average")]
    figure, axes = plt.subplots(figsize=(7, 4))
    for name in ("jfleg", "fce"):
        axes.plot(
            [r["hours"] for r in points], [r[f"{name}_gleu"] for r in points], marker="o", label=f"{name.upper()} dev"
        )
    for row in rows:
        if row["variant"].startswith("stage2 average"):
            for name, marker in (("jfleg", "*"), ("fce", "*")):
                axes.plot([row["hours"]], [row[f"{name}_gleu"]], marker=marker, markersize=12, color="black")
    axes.set(
        xlabel="training hours (2 CPU cores)",
        ylabel="GLEU (spelling stage, no review)",
        title="Dev GLEU by training hour",
    )
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--start", type=Path, required=True, help="the checkpoint the run continued")
    parser.add_argument("--start-hours", type=float, default=0.0, help="how long --start had been trained")
    parser.add_argument("--spelling-from", type=Path, required=True, help="a model folder with the same tokenizer")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--average", default="", help="K,...: stage 2's last K snapshots averaged")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args(argv)
    args.average = [int(k) for k in args.average.split(",") if k]
    rows = curve(args)
    print(table(rows, list(dict.fromkeys(c for row in rows for c in row))))
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
