"""Shared fixtures: the tiny test model exported by the real exporter, and a real Redis; and the guard of the
``server`` marker, which every test that starts real gecserve processes carries."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import redis

from bench.served.browser import CHROMIUM
from models.gec.language_model import ship_language_model
from models.gec.spelling_model import ship_spelling_model
from models.gec.vocabulary import ship_vocabulary

FIXTURE_MODEL = Path(__file__).parent / "fixtures" / "tiny-gec"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "models" / "gec-default"
SHIPPED_MODELS = sorted(manifest.parent for manifest in (ROOT / "models").glob("gec-*/manifest.json"))
DEV_DATA = ROOT.parent / "shared" / "data" / "dev"  # ../shared beside the checkout, as in CI
REDIS_URL = "redis://127.0.0.1:6379/0"  # .ci/run starts a server here when none answers
# Browser tests drive Debian's chromium (bench.served.browser); .ci/run installs it where it is missing.
NEEDS_CHROMIUM = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    return FIXTURE_MODEL


# A corpus for the spelling fixture: its words, each seen twice, are the vocabulary (with --min-count 2).
SPELLING_CORPUS = "The cat likes the old car. Tom found an honest owl. I saw an apple. Gecserve fixes zorbling."


def copy_with_vocabulary(model: Path, out: Path, corpus: str = SPELLING_CORPUS) -> Path:
    """``model``'s int8 variant copied to ``out`` with a vocabulary and a ranking built by the real builders from
    ``corpus``, as ``models.gec.package`` ships them."""
    out.mkdir(parents=True)
    for name in ("manifest.json", "tokenizer.json", "encoder.int8.onnx", "decoder.int8.onnx"):
        shutil.copy(model / name, out / name)
    data = out.parent / f"{out.name}-data"
    (data / "train").mkdir(parents=True)
    (data / "mono").mkdir()
    (data / "train" / "toy.train.detok.tgt").write_text(corpus + "\n", encoding="utf-8")
    with gzip.open(data / "mono" / "en.toy.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write(corpus + "\n")
    ship_vocabulary(out, data, min_count=2)
    ship_spelling_model(out, data, min_count=1)
    return out


def copy_with_language_model(model: Path, out: Path, corpus: str) -> Path:
    """``model``'s int8 variant copied to ``out`` with an n-gram language model of order 3 built by the real builder
    from ``corpus`` (the training targets and the monolingual data both hold it), as ``models.gec.package`` ships
    it."""
    out.mkdir(parents=True)
    for name in ("manifest.json", "tokenizer.json", "encoder.int8.onnx", "decoder.int8.onnx"):
        shutil.copy(model / name, out / name)
    data = out.parent / f"{out.name}-data"
    (data / "train").mkdir(parents=True)
    (data / "mono").mkdir()
    (data / "train" / "toy.train.detok.tgt").write_text(corpus + "\n", encoding="utf-8")
    with gzip.open(data / "mono" / "en.toy.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write(corpus + "\n")
    ship_language_model(out, data, order=3, min_count=1)
    return out


@pytest.fixture(scope="session")
def spelling_model_dir(tmp_path_factory) -> Path:
    """The tiny test model with a vocabulary, so that it has a spelling stage."""
    return copy_with_vocabulary(FIXTURE_MODEL, tmp_path_factory.mktemp("spelling") / "tiny-gec")


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix of the test's own on the real Redis; its keys are deleted afterwards."""
    client = redis.Redis.from_url(REDIS_URL)
    client.ping()  # a real Redis is part of the test environment: fail here, clearly, without one
    prefix = f"gecserve-test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    keys = list(client.scan_iter(match=prefix + "*"))
    if keys:
        client.delete(*keys)
    client.close()


def modules_loaded(imports: str, candidates: tuple[str, ...]) -> list[str]:
    """Which of ``candidates`` a fresh interpreter has loaded after ``import {imports}``."""
    code = f"import sys, {imports}; print(','.join(m for m in {candidates!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


# -- the `server` marker ------------------------------------------------------------------------------------
#
# A test that starts real gecserve processes (``gecserve serve``, ``gecserve worker``) is marked ``server``, in
# its module's ``pytestmark`` or on the test, so that ``-m "not server"`` runs the unit tests alone
# (``make test-unit``). A test that starts one without the marker fails, saying so: the marker cannot rot.

SERVER_COMMANDS = {"serve", "worker"}


def _words(args: object) -> list[str]:
    return [str(a) for a in args] if isinstance(args, Sequence) and not isinstance(args, str) else str(args).split()


def _launches_a_server(args: object) -> bool:
    """Whether a command line runs ``gecserve serve`` or ``gecserve worker`` (or ``python -m service.cli ...``)."""
    words = _words(args)
    for i, word in enumerate(words):
        if word == "service.cli" or Path(word).name == "gecserve":
            return bool(SERVER_COMMANDS & set(words[i + 1 : i + 2]))
    return False


_running: list[pytest.Item] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


class _GuardedPopen(subprocess.Popen):
    """``subprocess.Popen`` that refuses to start ``gecserve serve``/``worker`` for a test not marked ``server``."""

    def __init__(self, args, *rest, **options) -> None:
        if _running and _launches_a_server(args) and _running[-1].get_closest_marker("server") is None:
            pytest.fail(
                f"{_running[-1].nodeid} starts a real gecserve process ({' '.join(_words(args))}) but is not"
                " marked `server`: add `pytest.mark.server` to the test or its module's `pytestmark`",
                pytrace=False,
            )
        super().__init__(args, *rest, **options)


@pytest.fixture(scope="session", autouse=True)
def _refuse_unmarked_servers() -> Iterator[None]:
    original = subprocess.Popen
    subprocess.Popen = _GuardedPopen  # type: ignore[misc]
    yield
    subprocess.Popen = original  # type: ignore[misc]
