"""Backend choice."""

from __future__ import annotations

import pytest

from service.experiments.routing import choose_backend


def test_request_choice_wins_then_default() -> None:
    assert choose_backend("autoregressive", "u", "s", "accelerated") == "autoregressive"
    assert choose_backend(None, "u", "s", "accelerated") == "accelerated"
    assert choose_backend("", None, None, "autoregressive") == "autoregressive"


def test_unknown_backend_is_an_error() -> None:
    with pytest.raises(ValueError, match="quantum"):
        choose_backend("quantum", None, None, "accelerated")
