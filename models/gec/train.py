"""Train a BART-family GEC model on packed pairs: time-budgeted, checkpointed, resumable.

``python -m models.gec.train --data stage1.npz --out runs/x/stage1 --preset small
--minutes 110 --device cpu [--init DIR] [--resume]``

Progress (the fraction of the step or time budget used, whichever is larger) drives the
learning-rate schedule, so a run cut short and resumed ends on the same schedule. A
checkpoint (model, optimiser, step, elapsed time, epoch position) is written every
``--checkpoint-minutes``; the final model is saved with ``save_pretrained``. With ``--keep-snapshots N``
the model weights of the last N checkpoints (the final one included) are kept in ``snapshots/`` for
``models.gec.average``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm
from transformers import AutoModelForSeq2SeqLM

from models.gec.architecture import bart_config
from models.gec.dataset import Batch, PackedPairs, batch_plan, iterate_batches, make_batch


@dataclass
class TrainConfig:
    data: str
    out: str
    preset: str = "small"
    vocab_size: int = 8192
    device: str = "cpu"
    minutes: float = 60.0
    max_steps: int = 10**9
    max_tokens: int = 4096
    lr: float = 1e-3
    min_lr_ratio: float = 0.05
    warmup_steps: int = 500
    weight_decay: float = 0.01
    label_smoothing: float = 0.1
    dropout: float = 0.1
    clip: float = 1.0
    seed: int = 1
    bf16: bool = True
    compile: bool = True
    threads: int = 0
    checkpoint_minutes: float = 10.0
    init: str | None = None
    pre_norm: bool = False
    keep_snapshots: int = 0


def learning_rate(cfg: TrainConfig, step: int, progress: float) -> float:
    """Linear warm-up, then cosine decay to ``min_lr_ratio`` over the run's progress."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def build_model(cfg: TrainConfig) -> torch.nn.Module:
    if cfg.init:
        model = AutoModelForSeq2SeqLM.from_pretrained(cfg.init)
        model.config.dropout = cfg.dropout
        return model
    torch.manual_seed(cfg.seed)
    config = bart_config(cfg.preset, cfg.vocab_size, dropout=cfg.dropout, pre_norm=cfg.pre_norm)
    return AutoModelForSeq2SeqLM.from_config(config)


def loss_fn(logits: torch.Tensor, labels: torch.Tensor, smoothing: float) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(
        logits.float().view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100, label_smoothing=smoothing
    )


def source_gap(model: torch.nn.Module, batch: Batch, device: torch.device) -> float:
    """Loss with sources shuffled across rows minus loss with the real sources.

    About 0 means the model ignores its input (a stalled run that only learned a language
    model); a copying GEC model shows a gap of several nats.
    """
    was_training = model.training
    model.eval()
    tensors = {k: torch.from_numpy(v).to(device) for k, v in asdict(batch).items()}
    perm = torch.roll(torch.arange(len(batch.input_ids)), 1).to(device)
    with torch.no_grad():
        losses = []
        for order in (None, perm):
            ids = tensors["input_ids"] if order is None else tensors["input_ids"][order]
            mask = tensors["attention_mask"] if order is None else tensors["attention_mask"][order]
            logits = model(input_ids=ids, attention_mask=mask, decoder_input_ids=tensors["decoder_input_ids"]).logits
            losses.append(loss_fn(logits, tensors["labels"], 0.0).item())
    model.train(was_training)
    return losses[1] - losses[0]


def keep_snapshot(folder: Path, model: torch.nn.Module, step: int, keep: int) -> None:
    """Save the model's weights as ``step-N.pt`` in ``folder`` and delete all but the last ``keep``."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), folder / f"step-{step:07d}.pt")
    for old in sorted(folder.glob("step-*.pt"))[:-keep]:
        old.unlink()


def train(cfg: TrainConfig, resume: bool) -> dict:
    """Run (or continue) training; returns a summary dict also written to ``out/summary.json``."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = torch.device(cfg.device)
    data = PackedPairs.load(Path(cfg.data))
    num_batches = len(batch_plan(data.lengths(), cfg.max_tokens, cfg.seed))
    model = build_model(cfg).to(device)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=cfg.weight_decay
    )
    state = {"step": 0, "elapsed": 0.0, "epoch": 0, "batch": 0, "tokens": 0, "loss_ema": None}
    ckpt_path = out / "checkpoint.pt"
    if resume and ckpt_path.exists():
        ckpt = torch.load(ckpt_path, map_location=device, weights_only=False)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        state = ckpt["state"]
        print(f"resumed at step {state['step']} ({state['elapsed'] / 60:.1f} min)", file=sys.stderr)
    (out / "train_config.json").write_text(json.dumps(asdict(cfg), indent=2))

    forward = torch.compile(model, dynamic=True) if cfg.compile else model
    autocast = torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=cfg.bf16)
    budget = cfg.minutes * 60
    last_ckpt = time.monotonic()
    log_path = out / "train_log.jsonl"

    probe = make_batch(data, batch_plan(data.lengths(), 2048, cfg.seed + 99)[0])

    def save_checkpoint() -> None:
        if ema is not None:
            state["loss_ema"] = ema.item()
        gap = source_gap(model, probe, device)
        with open(log_path, "a") as log:
            log.write(json.dumps({"step": state["step"], "source_gap": round(gap, 4)}) + "\n")
        tmp = ckpt_path.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "state": state}, tmp)
        tmp.replace(ckpt_path)
        if cfg.keep_snapshots:
            keep_snapshot(out / "snapshots", model, state["step"], cfg.keep_snapshots)

    def progress() -> float:
        return max(state["step"] / cfg.max_steps, state["elapsed"] / budget)

    ema = None if state["loss_ema"] is None else torch.tensor(state["loss_ema"], device=device)
    bar = tqdm(total=100, desc="train", unit="%", initial=int(100 * progress()), file=sys.stderr)
    model.train()
    done = progress() >= 1.0
    while not done:
        for batch_index, batch in iterate_batches(data, cfg.max_tokens, cfg.seed + state["epoch"], state["batch"]):
            started = time.monotonic()
            lr = learning_rate(cfg, state["step"], progress())
            for group in optimizer.param_groups:
                group["lr"] = lr
            tensors = {k: torch.from_numpy(v).to(device) for k, v in asdict(batch).items()}
            with autocast:
                logits = forward(
                    input_ids=tensors["input_ids"],
                    attention_mask=tensors["attention_mask"],
                    decoder_input_ids=tensors["decoder_input_ids"],
                ).logits
            loss = loss_fn(logits, tensors["labels"], cfg.label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            optimizer.step()

            value = loss.detach()  # read back every 50 steps, not at each: a read waits for the device
            ema = value if ema is None else 0.98 * ema + 0.02 * value
            state["step"] += 1
            state["batch"] = batch_index + 1
            state["tokens"] += batch.tokens
            state["elapsed"] += time.monotonic() - started
            if state["step"] % 50 == 0:
                state["loss_ema"] = ema.item()
                rate = state["tokens"] / max(state["elapsed"], 1e-9)
                record = {
                    "step": state["step"],
                    "loss": round(state["loss_ema"], 4),
                    "lr": lr,
                    "minutes": round(state["elapsed"] / 60, 2),
                    "tokens_per_s": round(rate),
                }
                with open(log_path, "a") as log:
                    log.write(json.dumps(record) + "\n")
                bar.set_postfix(loss=f"{state['loss_ema']:.3f}", tok_s=f"{rate:.0f}", step=state["step"])
                bar.n = int(100 * min(1.0, progress()))
                bar.refresh()
            if time.monotonic() - last_ckpt > cfg.checkpoint_minutes * 60:
                save_checkpoint()
                last_ckpt = time.monotonic()
            if progress() >= 1.0:
                done = True
                break
        else:
            state["epoch"] += 1
            state["batch"] = 0
    bar.close()
    save_checkpoint()
    model.save_pretrained(out / "model")
    summary = {
        "steps": state["step"],
        "epochs": round(state["epoch"] + state["batch"] / max(1, num_batches), 3),
        "minutes": round(state["elapsed"] / 60, 1),
        "tokens": state["tokens"],
        "tokens_per_s": round(state["tokens"] / max(state["elapsed"], 1e-9)),
        "final_loss": state["loss_ema"],
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": cfg.device,
        "torch": torch.__version__,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary), file=sys.stderr)
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = TrainConfig(data="", out="")
    for name, value in asdict(defaults).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=value)
        elif name in ("data", "out"):
            parser.add_argument(flag, required=True)
        else:
            parser.add_argument(flag, type=type(value) if value is not None else str, default=value)
    parser.add_argument("--resume", action="store_true")
    args = vars(parser.parse_args(argv))
    resume = args.pop("resume")
    np.random.seed(0)
    train(TrainConfig(**args), resume)


if __name__ == "__main__":
    main()
