"""Start-up: the settings of ``gecserve serve`` and ``gecserve worker`` read and checked before a model is loaded.

The configuration (``service.config``) is data; what it takes to know whether it can work is here, above the parts
it names (``tests/test_layers.py``): ``load_settings`` reads the settings as ``CheckedSettings``, whose names are
checked against the tables they name (the engine's strategies, the arms' backends), ``check_model`` reads the
model folders they serve, and ``listen`` binds the ports. Settings that cannot work are a ``SettingError``: a
value that does not validate (``load_settings``), a model folder that is not one (``check_model``), a port that
cannot be listened on (``listen``).
"""

from __future__ import annotations

import errno
import json
import socket
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError, field_validator

from service.config import SettingError, Settings, setting_name, strategies
from service.engine.engine import STRATEGIES
from service.engine.manifest import ModelFolderError, check_model_folder
from service.experiments.arms import BACKENDS
from service.repository.sources import model_sources

__all__ = ["CheckedSettings", "check_model", "listen", "load_settings"]

SECRET_FIELDS = frozenset({"admin_key", "api_keys"})  # their values are never repeated in a message


class CheckedSettings(Settings):
    """The settings, with each name they give one the engine's or the arms' table knows."""

    @field_validator("continuous_batching")
    @classmethod
    def _continuous_strategies(cls, value: str) -> str:
        unknown = sorted(set(strategies(value)) - set(STRATEGIES))
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not a strategy; known: {', '.join(STRATEGIES)}")
        return value

    @field_validator("default_backend")
    @classmethod
    def _known_backend(cls, name: str) -> str:
        if name not in BACKENDS:
            raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
        return name


def load_settings(given: Mapping[str, Any], flags: Mapping[str, str] | None = None) -> CheckedSettings:
    """The settings: the environment's, with the ``given`` values (of command-line flags, by field) over them.
    ``SettingError`` names every one that does not validate, by its flag (``flags``) or environment variable."""
    flags = flags or {}
    try:
        return CheckedSettings(**given)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            field = str(item["loc"][0]) if item["loc"] else ""
            message = item["msg"].removeprefix("Value error, ")
            value = "" if field in SECRET_FIELDS else f"={json.dumps(item['input'], default=str)}"
            problems.append(f"{setting_name(field, flags)}{value}: {message}")
        raise SettingError("; ".join(problems)) from error


def check_model(
    settings: Settings, flags: Mapping[str, str] | None = None, decodes: bool = True, preprocesses: bool = True
) -> None:
    """``SettingError`` unless every model the settings serve (``model_path``, and each of ``models``) is a model
    folder whose manifest reads, ``model_variant`` (when set) is one of its variants, and the files it names are
    there: the tokenizer, the variant's graphs where this process ``decodes``, the spelling stage's and the
    language model's where it ``preprocesses`` with them on."""
    flags = flags or {}
    try:
        sources = model_sources(settings)
    except ValueError as error:
        raise SettingError(f"{setting_name('models', flags)}: {error}") from error
    for source in sources:
        where = setting_name("model_path" if source.path == settings.model_path else "models", flags)
        try:
            check_model_folder(
                source.path,
                settings.model_variant,
                decodes=decodes,
                spelling=preprocesses and settings.spelling,
                review=preprocesses and settings.lm_review,
            )
        except ModelFolderError as error:
            name = setting_name("model_variant", flags) if error.variant and settings.model_variant else where
            raise SettingError(f"{name}: {error}") from error


def listen(host: str, port: int, field: str, flags: Mapping[str, str] | None = None) -> socket.socket:
    """A socket listening on ``host:port``, the port of the setting ``field``; ``SettingError`` naming the
    host or the port (by its flag in ``flags``, else its environment variable) when it cannot."""
    flags = flags or {}
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise SettingError(f"{setting_name('host', flags)}: {host}: {error.strerror}") from error
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn and gRPC bind
        sock.bind(address)
        sock.listen()
    except OSError as error:
        sock.close()
        name = setting_name("host" if error.errno == errno.EADDRNOTAVAIL else field, flags)
        raise SettingError(f"{name}: cannot listen on {host}:{port}: {error.strerror}") from error
    return sock
