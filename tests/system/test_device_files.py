"""``/device/model.json`` and ``/device/files/...`` (``service/api/http/device.py``) from a real server: what the device
engine downloads, compressed, cached under URLs that carry each file's SHA-256, refused by name or digest, and no
device engine where the model has no int8 variant or the runtime is not installed; the policy and the word list are
the service's (``service.text.device_confidence``), with the model's device fit where it has one."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import httpx
import pytest

from service.api.http.device import POLICY_FILE, RUNTIME, RUNTIME_DIR, WORDS_FILE, DeviceFiles
from service.engine.manifest import ModelManifest, level_keep_bias
from service.text import device_confidence
from service.text.policy import LEVELS, MULTIPLIERS
from tests.conftest import FIXTURE_MODEL
from tests.system.server import RunningServer

pytestmark = pytest.mark.server  # the runtime is installed by `make test` (make web)


def test_the_model_description_names_every_file_by_its_digest(server: RunningServer) -> None:
    described = httpx.get(server.url + "/device/model.json").json()
    manifest = ModelManifest.load(FIXTURE_MODEL)
    assert (described["name"], described["version"], described["variant"]) == (manifest.name, manifest.version, "int8")
    assert set(described["files"]) == {"encoder", "decoder", "tokenizer", "policy", "words", *RUNTIME}
    assert described["contract"]["decoder_layers"] == manifest.decoder_layers
    assert described["contract"]["vocab_size"] == manifest.architecture["vocab_size"]
    assert described["max_text_chars"] == 20_000 and described["keep_bias"] == manifest.keep_bias
    assert described["level_keep_bias"] == {level: level_keep_bias(manifest, level) for level in LEVELS}
    for role, file in described["files"].items():
        if role in ("policy", "words"):
            continue  # made by the service (below)
        local = (FIXTURE_MODEL / manifest.variants["int8"][role]) if role in ("encoder", "decoder") else None
        local = local or (FIXTURE_MODEL / manifest.tokenizer if role == "tokenizer" else RUNTIME_DIR / RUNTIME[role])
        digest, name = file["url"].split("/")[-2:]
        assert name == local.name and digest == hashlib.sha256(local.read_bytes()).hexdigest()
        assert file["bytes"] == local.stat().st_size


def test_files_are_sent_compressed_immutable_and_revalidated(server: RunningServer) -> None:
    files = httpx.get(server.url + "/device/model.json").json()["files"]
    url = server.url + files["wasm"]["url"]
    plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
    assert plain.headers.get("content-encoding") is None and plain.headers["content-type"] == "application/wasm"
    with httpx.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as response:
        raw = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "gzip" and len(raw) < len(plain.content) / 2
    assert gzip.decompress(raw) == plain.content
    assert "immutable" in plain.headers["cache-control"] and plain.headers["etag"] == f'"{url.split("/")[-2]}"'
    assert httpx.get(url, headers={"If-None-Match": plain.headers["etag"]}).status_code == 304
    module = httpx.get(server.url + files["ort"]["url"])
    assert module.headers["content-type"].startswith("text/javascript")


def test_a_file_is_refused_under_another_digest_or_name(server: RunningServer) -> None:
    url = httpx.get(server.url + "/device/model.json").json()["files"]["encoder"]["url"]
    digest, name = url.split("/")[-2:]
    for wrong in (f"/device/files/{'0' * 64}/{name}", f"/device/files/{digest}/manifest.json"):
        response = httpx.get(server.url + wrong)
        assert response.status_code == 404 and response.json()["error"]["reason"] == "not_found"


def test_the_policy_and_the_word_list_are_the_service_s(server: RunningServer, tmp_path: Path) -> None:
    files = httpx.get(server.url + "/device/model.json").json()["files"]
    words = httpx.get(server.url + files["words"]["url"], headers={"Accept-Encoding": "gzip"})
    assert words.headers["content-type"] == "application/gzip" and words.headers.get("content-encoding") is None
    assert words.content == device_confidence.words_file() and files["words"]["url"].endswith(WORDS_FILE)
    assert len(words.content) == files["words"]["bytes"] < 1_500_000
    assert device_confidence.DeviceWords.parse(words.content).zipf("the") > 7
    policy = httpx.get(server.url + files["policy"]["url"])
    assert files["policy"]["url"].split("/")[-2:] == [hashlib.sha256(policy.content).hexdigest(), POLICY_FILE]
    assert policy.json()["levels"] == LEVELS and policy.json()["features"] == list(device_confidence.FEATURES)
    assert policy.json()["multipliers"] == {name: MULTIPLIERS[name] for name in device_confidence.CLASSES}
    assert policy.json()["weights"] == []  # the fixture model has no device fit: the model's own probability
    fitted = tmp_path / "fitted"
    shutil.copytree(FIXTURE_MODEL, fitted, ignore=shutil.ignore_patterns("hf"))
    weights = [0.5] * len(device_confidence.FEATURES)
    fit = {"features": list(device_confidence.FEATURES), "weights": weights}
    (fitted / "device.json").write_text(json.dumps(fit), encoding="utf-8")
    manifest = ModelManifest.load(fitted)
    manifest.extra["device_confidence"] = "device.json"
    manifest.save(fitted)
    made = DeviceFiles(fitted, 100).made[POLICY_FILE]
    assert made == device_confidence.policy_file(device_confidence.DeviceConfidence(tuple(weights)))
