"""The recipe's stages: from scratch, continuing a model, and fine-tuning one (stage 2 alone)."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.gec.recipe import main
from models.gec.schedule import SCHEDULES, stage_settings


def test_from_scratch_stage_two_starts_from_stage_one() -> None:
    stages = stage_settings(95.0, 15.0, Path("runs/x"), None, seed=1)
    assert list(stages) == ["stage1", "stage2"]
    assert stages["stage1"]["pre_norm"] and "init" not in stages["stage1"]
    assert stages["stage2"]["init"] == str(Path("runs/x/stage1/model"))


def test_continuing_a_model_starts_stage_one_from_it_and_keeps_snapshots() -> None:
    stages = stage_settings(150.0, 40.0, Path("runs/x"), Path("runs/v2"), seed=2)
    assert stages["stage1"]["init"] == str(Path("runs/v2"))
    assert stages["stage1"]["lr"] < 1e-3 and stages["stage1"]["keep_snapshots"] > 0
    assert stages["stage2"]["seed"] == 3


def test_fine_tuning_has_no_stage_one_and_stage_two_starts_from_the_model() -> None:
    minutes1, minutes2, _, _ = SCHEDULES["cpu-finetune"]
    stages = stage_settings(minutes1, minutes2, Path("runs/x"), Path("runs/v2"), seed=3)
    assert list(stages) == ["stage2"]
    assert stages["stage2"]["init"] == str(Path("runs/v2"))
    assert stages["stage2"]["minutes"] == minutes2 > 0


def test_fine_tuning_without_a_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--data", str(tmp_path), "--run", str(tmp_path / "run"), "--schedule", "cpu-finetune"])
    assert stopped.value.code == 2
    assert "--init" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_the_mixture_without_a_teacher_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--data", str(tmp_path), "--run", str(tmp_path / "run"), "--schedule", "cpu-mixture", "--init", "x"]
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert "--teacher and --exclude" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
