"""Backend choice for a request. The single place an A/B assignment will plug into."""

from __future__ import annotations

BACKENDS = ("accelerated", "autoregressive")


def choose_backend(requested: str | None, user_id: str | None, session_id: str | None, default: str) -> str:
    """The request's own choice when it names one, else the configured default."""
    if requested:
        if requested not in BACKENDS:
            raise ValueError(f"unknown backend {requested!r}; choose one of {', '.join(BACKENDS)}")
        return requested
    return default
