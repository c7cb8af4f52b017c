"""What ``DeviceFiles`` (``service/api/http/device.py``) offers the device engine, without a server: no device
engine where the model has no int8 variant or the runtime is not installed, and the model's vocabulary where it has
one. (The files served by a real server: ``tests/system/test_device_files.py``.)"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from service.api.http.device import DeviceFiles
from service.config import DEFAULT_MODEL
from service.engine.manifest import ModelManifest
from tests.conftest import FIXTURE_MODEL


def test_no_device_engine_without_an_int8_variant_or_the_runtime(tmp_path: Path) -> None:
    fp32_only = tmp_path / "fp32-only"
    shutil.copytree(FIXTURE_MODEL, fp32_only, ignore=shutil.ignore_patterns("hf", "*.int8.onnx"))
    manifest = ModelManifest.load(fp32_only)
    del manifest.variants["int8"]
    manifest.default_variant = "fp32"
    manifest.save(fp32_only)
    assert "no int8 variant" in DeviceFiles(fp32_only, 100).missing
    assert "runtime is not installed" in DeviceFiles(FIXTURE_MODEL, 100, tmp_path / "nothing").missing
    assert DeviceFiles(FIXTURE_MODEL, 100).missing is None


def test_a_model_with_a_vocabulary_sends_it_for_the_device_s_language_check() -> None:
    manifest = ModelManifest.load(DEFAULT_MODEL)
    vocabulary = DeviceFiles(DEFAULT_MODEL, 100).description()["files"]["vocabulary"]
    digest = hashlib.sha256((DEFAULT_MODEL / manifest.vocabulary).read_bytes()).hexdigest()
    assert vocabulary["url"] == f"/device/files/{digest}/{manifest.vocabulary}"
    assert "vocabulary" not in DeviceFiles(FIXTURE_MODEL, 100).description()["files"]  # the fixture has none
