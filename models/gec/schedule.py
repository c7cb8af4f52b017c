"""The training schedules of the default model's recipe: each one's minutes, size preset and batch, and each
stage's settings (``models.gec.recipe`` here, ``models.gec.lease`` on a lent GPU machine).

No import beyond the standard library: the lent machine reads it with none of the service's dependencies.
"""

from __future__ import annotations

from pathlib import Path

SCHEDULES = {
    # (stage-1 minutes, stage-2 minutes, preset, tokens per side per batch). The model is the
    # pre-norm (mBART) layout: post-norm BART with this short warm-up stalled as a language model
    # that ignored its source (source gap 0.04 nats after 1,000 steps).
    # cpu-session: the shipped model; fits beside packaging and benchmarks in a 3-hour session.
    "cpu-session": (95.0, 15.0, "small", 4096),
    "cpu-long": (125.0, 25.0, "small", 4096),
    "gpu": (150.0, 30.0, "base", 16384),
    # gpu-lease: the larger model within one command on a lent GPU machine (models.gec.lease), whose stages share
    # the minutes left after the preparation in this proportion.
    "gpu-lease": (6.4, 1.6, "base", 16384),
    "smoke": (1.0, 0.5, "tiny", 1024),
    # cpu-continue: more training for a model given with --init (model version 3 continued version 2).
    "cpu-continue": (150.0, 40.0, "small", 4096),
    # cpu-finetune: stage 2 alone from --init (version 3). Stage 1 continued on fresh synthetic errors gave JFLEG
    # dev +0.3 GLEU and FCE dev -0.4 at its step 563 (training_curve), 60 minutes of this +1.3 and +1.8.
    "cpu-finetune": (0.0, 60.0, "small", 4096),
    # cpu-mixture: stage 2 alone from --init on the mixture of models.gec.mixture (version 4): learner pairs the
    # teacher kept, identity pairs of clean text, synthetic errors of the classes the model misses.
    "cpu-mixture": (0.0, 50.0, "small", 4096),
}
CONTINUE_LR = 5e-4  # stage 1 from a trained model: half the from-scratch peak, a short warm-up
SNAPSHOTS = {"checkpoint_minutes": 10.0, "keep_snapshots": 30}  # every checkpoint's weights kept: dev figures by hour


def stage_settings(minutes1: float, minutes2: float, run: Path, init: Path | None, seed: int) -> dict[str, dict]:
    """Each training stage's own settings, in order; no stage 1 when it has no minutes (a fine-tuning run)."""
    stage1 = (
        {"minutes": minutes1, "lr": 1e-3, "warmup_steps": 400, "seed": seed, "pre_norm": True}
        if init is None
        else {"minutes": minutes1, "lr": CONTINUE_LR, "warmup_steps": 100, "seed": seed, "init": str(init)} | SNAPSHOTS
    )
    stage2 = {
        "minutes": minutes2,
        "lr": 3e-4,
        "warmup_steps": 100,
        "min_lr_ratio": 0.1,
        "seed": seed + 1,
        "init": str(run / "stage1" / "model") if minutes1 else str(init),
    } | SNAPSHOTS
    # Stage 1: synthetic + learner pairs, from scratch in the pre-norm layout, or from --init. Stage 2: learner
    # pairs only, from stage 1, or from --init in a fine-tuning run (the layout comes with the checkpoint).
    return {"stage1": stage1, "stage2": stage2} if minutes1 else {"stage2": stage2}
