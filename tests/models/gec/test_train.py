"""Training: the loss falls on a tiny task, and a run cut short resumes where it stopped."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.gec.dataset import PackedPairs
from models.gec.tokenizer import EOS_ID

torch = pytest.importorskip("torch", reason="build extra (torch) not installed")

from models.gec.train import TrainConfig, learning_rate, train  # noqa: E402


def _copy_task(path) -> str:
    rng = np.random.default_rng(0)
    rows = [[*list(rng.integers(4, 60, size=rng.integers(3, 12))), EOS_ID] for _ in range(64)]
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    flat = np.concatenate(rows).astype(np.int32)
    PackedPairs(flat, offsets, flat.copy(), offsets.copy()).save(path)
    return str(path)


def _config(tmp_path, steps: int, **extra) -> TrainConfig:
    return TrainConfig(
        data=_copy_task(tmp_path / "pairs.npz"),
        out=str(tmp_path / "run"),
        preset="tiny",
        vocab_size=64,
        max_steps=steps,
        max_tokens=256,
        lr=3e-3,
        warmup_steps=5,
        bf16=False,
        compile=False,
        threads=1,
        **extra,
    )


def test_learning_rate_warms_up_then_decays() -> None:
    cfg = TrainConfig(data="", out="", lr=1.0, warmup_steps=10, min_lr_ratio=0.1)
    assert learning_rate(cfg, 0, 0.0) == pytest.approx(0.1)
    assert learning_rate(cfg, 10, 0.0) == pytest.approx(1.0)
    assert learning_rate(cfg, 500, 1.0) == pytest.approx(0.1)


def test_loss_falls_and_model_is_saved(tmp_path) -> None:
    summary = train(_config(tmp_path, 150), resume=False)
    log = [json.loads(line) for line in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in log if "loss" in r]  # logged every 50 steps
    assert summary["steps"] == 150 and len(losses) == 3
    assert losses[-1] < losses[0] and losses[-1] < np.log(64) - 1.0  # well below a uniform guess
    assert (tmp_path / "run" / "model" / "config.json").exists()
    assert any("source_gap" in r for r in log)


@pytest.mark.parametrize("pre_norm", [False, True])
def test_resume_continues_from_the_checkpoint(tmp_path, pre_norm: bool) -> None:
    first = train(_config(tmp_path, 6, pre_norm=pre_norm), resume=False)
    assert first["steps"] == 6
    resumed = train(_config(tmp_path, 10, pre_norm=pre_norm), resume=True)
    assert resumed["steps"] == 10  # 4 more steps, not 10 from scratch
    assert resumed["tokens"] > first["tokens"]
    config = json.loads((tmp_path / "run" / "model" / "config.json").read_text())
    assert config["model_type"] == ("mbart" if pre_norm else "bart")


def test_snapshots_are_kept_and_averaged(tmp_path) -> None:
    """Every checkpoint keeps its weights (the last ``keep_snapshots``); their average is the mean, weight by weight,
    saved as a model that loads."""
    from transformers import AutoModelForSeq2SeqLM

    from models.gec.average import average_snapshots

    train(_config(tmp_path, 6, keep_snapshots=2, checkpoint_minutes=0.0), resume=False)
    snapshots = sorted((tmp_path / "run" / "snapshots").glob("step-*.pt"))
    assert [p.stem for p in snapshots] == ["step-0000005", "step-0000006"]  # each step checkpointed; two kept
    used = average_snapshots(tmp_path / "run", 2, tmp_path / "averaged")
    assert used == snapshots
    first, last = (torch.load(p, weights_only=True) for p in snapshots)
    averaged = AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "averaged").state_dict()
    name = "model.encoder.layers.0.fc1.weight"
    assert not torch.equal(first[name], last[name])
    assert torch.allclose(averaged[name], (first[name] + last[name]) / 2, atol=1e-7)
