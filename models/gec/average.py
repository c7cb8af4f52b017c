"""Average the weights of a training stage's last checkpoints into one model (checkpoint averaging).

    python -m models.gec.average --stage runs/x/stage2 --last 5 --out runs/x/averaged

Reads ``snapshots/step-N.pt`` that ``models.gec.train --keep-snapshots`` kept, averages the last ``--last``
of them parameter by parameter, and saves the result with the stage's ``model/`` configuration, as
``save_pretrained`` does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from transformers import AutoModelForSeq2SeqLM


def average_snapshots(stage: Path, last: int, out: Path) -> list[Path]:
    """Average the last ``last`` snapshots of ``stage`` into ``out``; the snapshots used, oldest first."""
    snapshots = sorted((stage / "snapshots").glob("step-*.pt"))[-last:]
    if not snapshots:
        raise FileNotFoundError(f"no snapshots in {stage / 'snapshots'}")
    total: dict[str, torch.Tensor] = {}
    for path in snapshots:
        weights = torch.load(path, map_location="cpu", weights_only=True)
        for name, tensor in weights.items():
            if tensor.is_floating_point():
                total[name] = total.get(name, 0) + tensor.double()
    averaged = {name: (total[name] / len(snapshots)).to(t.dtype) if name in total else t for name, t in weights.items()}
    model = AutoModelForSeq2SeqLM.from_pretrained(stage / "model")
    model.load_state_dict(averaged)
    model.save_pretrained(out)
    return snapshots


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", type=Path, required=True, help="a training stage's folder (its snapshots/)")
    parser.add_argument("--last", type=int, default=5)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    used = average_snapshots(args.stage, args.last, args.out)
    print(f"averaged {len(used)}: {', '.join(p.stem for p in used)} -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
