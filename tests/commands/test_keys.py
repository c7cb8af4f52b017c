"""``key_entry``: the keys-file entry ``gecserve keys hash --name`` prints, for code that configures a server."""

from __future__ import annotations

import hashlib

import pytest

from service.api.access.auth import KeyFileError, parse_entry
from service.commands.keys import key_entry


def test_an_entry_is_the_name_and_the_keys_sha256_with_its_own_limit_when_given() -> None:
    digest = hashlib.sha256(b"secret-key").hexdigest()
    assert key_entry("alice", "secret-key") == f"alice:{digest}"
    assert key_entry("bob", "secret-key", (2.0, 5)) == f"bob:{digest}:2:5"
    limited = parse_entry(key_entry("bob", "secret-key", (0.5, 3)), "x")
    assert (limited.name, limited.rate, limited.burst) == ("bob", 0.5, 3)


@pytest.mark.parametrize(("name", "limit"), [("al ice", None), ("admin", None), ("bob", (0.0, 3))])
def test_an_entry_the_service_would_refuse_is_refused(name: str, limit: tuple[float, int] | None) -> None:
    with pytest.raises(KeyFileError):
        key_entry(name, "secret-key", limit)
