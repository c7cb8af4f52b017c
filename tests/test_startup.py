"""The start-up's reading of the settings (``service.startup.load_settings``): every value that cannot work, the
names the engine's and the arms' tables do not know among them, in one ``SettingError`` line, each setting named by
its flag when given as one, else by its environment variable, in the settings' order; a secret's value never shown.
(The commands printing it and exiting with status 2: ``tests/system/test_bad_settings.py``.)"""

from __future__ import annotations

import pytest

from service.config import SettingError
from service.engine.engine import STRATEGIES
from service.experiments.arms import BACKENDS
from service.startup import load_settings


def test_every_problem_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GECSERVE_DEFAULT_BACKEND", "fastest")
    monkeypatch.setenv("GECSERVE_CONTINUOUS_BATCHING", "beam, nucleus")
    monkeypatch.setenv("GECSERVE_ADMIN_KEY", "x")
    with pytest.raises(SettingError) as raised:
        load_settings({"http_port": "abc", "admin_key": ["not", "a", "string"]}, {"http_port": "--http-port"})
    assert str(raised.value) == "; ".join(
        [
            '--http-port="abc": Input should be a valid integer, unable to parse string as an integer',
            f"GECSERVE_DEFAULT_BACKEND=\"fastest\": unknown backend 'fastest'; choose one of {', '.join(BACKENDS)}",
            f'GECSERVE_CONTINUOUS_BATCHING="beam, nucleus": nucleus: not a strategy; known: {", ".join(STRATEGIES)}',
            "GECSERVE_ADMIN_KEY: Input should be a valid string",
        ]
    )


def test_settings_that_can_work_are_read_with_the_flags_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GECSERVE_HTTP_PORT", "8100")
    monkeypatch.setenv("GECSERVE_DEFAULT_BACKEND", "beam")
    settings = load_settings({"http_port": 8200, "continuous_batching": "greedy,beam"})
    assert (settings.http_port, settings.default_backend) == (8200, "beam")
    assert settings.continuous_strategies == {"greedy", "beam"}
