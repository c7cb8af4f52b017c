"""Where the served models come from: ``GECSERVE_MODELS`` entries (pairs, folders, folders of folders), the default
model, and the entries refused with a message naming them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from service.config import SettingError, Settings
from service.repository.sources import ModelSource, model_sources, parse_models
from service.startup import check_model
from tests.conftest import FIXTURE_MODEL


def test_pairs_keep_their_names_and_order(tmp_path: Path) -> None:
    assert parse_models(f" b={FIXTURE_MODEL} , a={tmp_path},") == [
        ModelSource("b", FIXTURE_MODEL),
        ModelSource("a", tmp_path),
    ]


def test_a_model_folder_is_named_by_its_manifest_and_a_folder_of_folders_by_each_folder(tmp_path: Path) -> None:
    assert parse_models(str(FIXTURE_MODEL)) == [ModelSource("tiny-gec", FIXTURE_MODEL)]
    for name in ("v1", "v2"):
        shutil.copytree(FIXTURE_MODEL, tmp_path / "repo" / name)
    (tmp_path / "repo" / "notes").mkdir()
    assert [source.name for source in parse_models(str(tmp_path / "repo"))] == ["v1", "v2"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("a=x,a=y", "named twice"),
        ("bad name=x", "a model name"),
        ("{empty}", "neither a model folder nor a folder of model folders"),
    ],
)
def test_bad_entries_are_named(tmp_path: Path, spec: str, message: str) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=message):
        parse_models(spec.format(empty=tmp_path / "empty"))


def test_the_default_is_the_model_path_when_set_else_the_first_listed(tmp_path: Path) -> None:
    listed = f"second={tmp_path / 'b'},first={FIXTURE_MODEL}"
    assert [s.name for s in model_sources(Settings(models=listed))] == ["second", "first"]
    explicit = model_sources(Settings(models=listed, model_path=FIXTURE_MODEL))
    assert [s.name for s in explicit] == ["first", "second"]  # the listed entry of that folder, first
    apart = model_sources(Settings(models=f"other={tmp_path / 'b'}", model_path=FIXTURE_MODEL))
    assert [s.name for s in apart] == ["tiny-gec", "other"]
    assert [s.name for s in model_sources(Settings(model_path=FIXTURE_MODEL))] == ["tiny-gec"]


def test_every_listed_model_is_checked_at_start_up(tmp_path: Path) -> None:
    settings = Settings(model_path=FIXTURE_MODEL, model_variant="int8", models=f"second={tmp_path}")
    with pytest.raises(SettingError, match=r"GECSERVE_MODELS: .* is not a model folder"):
        check_model(settings, preprocesses=False)
    clash = Settings(model_path=FIXTURE_MODEL, model_variant="int8", models=f"tiny-gec={tmp_path}")
    with pytest.raises(SettingError, match="both named 'tiny-gec'"):
        check_model(clash, preprocesses=False)
