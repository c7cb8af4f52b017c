"""API keys: who may call the service, stored hashed, compared in constant time.

Keys come from ``GECSERVE_API_KEYS_FILE`` (one entry a line; blank lines and ``#`` comments are
skipped) and ``GECSERVE_API_KEYS`` (entries separated by commas). An entry is ``name:sha256hex``,
or ``name:sha256hex:rate:burst`` to give that key a rate limit of its own (``rate`` requests per
second, ``burst`` at once; ``ratelimit.py``). The hash is the SHA-256 of the key's UTF-8 bytes in
hex (``gecserve keys hash`` prints it), so neither place holds a usable key. Names (1-64 of
``A-Z a-z 0-9 . _ -``) label the metrics and the rate-limit buckets; ``admin`` is the admin key's.

With no key configured the service is open, as it always was. A presented key is hashed and
compared with every entry by ``hmac.compare_digest`` (no early exit), and the admin key, when one
is set, is accepted as a credential too (under the name ``admin``, with no rate limit).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from service.error_reasons import ErrorReason
from service.pipeline.errors import RequestError

__all__ = [
    "ADMIN",
    "ApiKey",
    "KeyFileError",
    "KeyRing",
    "UnauthorizedError",
    "hash_key",
    "load_keys",
    "parse_entry",
    "same_secret",
]

ADMIN = "admin"
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_HASH = re.compile(r"[0-9a-f]{64}")


class UnauthorizedError(RequestError):
    reason = ErrorReason.UNAUTHORIZED


class KeyFileError(ValueError):
    """An entry of the keys file or of ``GECSERVE_API_KEYS`` that does not parse (the message says where)."""


def hash_key(key: str) -> str:
    """The stored form of ``key``: its SHA-256 in hex."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def same_secret(presented: str, expected: str) -> bool:
    """Whether two secrets are equal, in time that depends on neither (their hashes are compared)."""
    return hmac.compare_digest(hashlib.sha256(presented.encode()).digest(), hashlib.sha256(expected.encode()).digest())


@dataclass(frozen=True)
class ApiKey:
    name: str
    digest: bytes  # SHA-256 of the key
    rate: float | None = None  # this key's own limit (requests/s and burst); None: the settings'
    burst: int | None = None


def parse_entry(entry: str, where: str) -> ApiKey:
    """One ``name:sha256hex[:rate:burst]`` entry; ``where`` names it in errors (file and line)."""
    fields = entry.strip().split(":")
    if len(fields) not in (2, 4):
        raise KeyFileError(f"{where}: expected name:sha256hex or name:sha256hex:rate:burst")
    name, digest = fields[0], fields[1].lower()
    if not _NAME.fullmatch(name) or name == ADMIN:
        raise KeyFileError(f"{where}: the name must be 1-64 of A-Z a-z 0-9 . _ - (and not {ADMIN!r})")
    if not _HASH.fullmatch(digest):
        raise KeyFileError(f"{where}: the hash must be 64 hex digits (gecserve keys hash), not the key itself")
    if len(fields) == 2:
        return ApiKey(name, bytes.fromhex(digest))
    try:
        rate, burst = float(fields[2]), int(fields[3])
    except ValueError:
        raise KeyFileError(f"{where}: rate must be a number and burst an integer") from None
    if not (rate > 0 and burst >= 1):
        raise KeyFileError(f"{where}: rate must be above 0 and burst at least 1")
    return ApiKey(name, bytes.fromhex(digest), rate, burst)


def _entries(file: Path | None, inline: str | None) -> Iterable[tuple[str, str]]:
    if file is not None:
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise KeyFileError(f"{file}: cannot read the keys file: {error}") from None
        for number, line in enumerate(lines, 1):
            if line.strip() and not line.lstrip().startswith("#"):
                yield line, f"{file}:{number}"
    for index, entry in enumerate((inline or "").split(",")):
        if entry.strip():
            yield entry, f"GECSERVE_API_KEYS entry {index + 1}"


def load_keys(file: Path | None, inline: str | None) -> list[ApiKey]:
    """Every key of the keys file and the inline list; names and hashes must be unique."""
    keys: list[ApiKey] = []
    for entry, where in _entries(file, inline):
        key = parse_entry(entry, where)
        if any(k.name == key.name for k in keys):
            raise KeyFileError(f"{where}: the name {key.name!r} is used twice")
        if any(k.digest == key.digest for k in keys):
            raise KeyFileError(f"{where}: the same key is listed twice")
        keys.append(key)
    return keys


class KeyRing:
    """The configured keys (and the admin key): who a presented key is."""

    def __init__(self, keys: Iterable[ApiKey], admin_key: SecretStr | None = None) -> None:
        self.keys = list(keys)
        self.admin = None if admin_key is None else ApiKey(ADMIN, bytes.fromhex(hash_key(admin_key.get_secret_value())))

    @property
    def enabled(self) -> bool:
        """Whether requests need a key (any API key is configured)."""
        return bool(self.keys)

    def identify(self, presented: str) -> ApiKey | None:
        """The entry whose hash is the presented key's, comparing with every entry in constant time."""
        digest = hashlib.sha256(presented.encode("utf-8", "surrogatepass")).digest()
        found = None
        for key in [*self.keys, *([self.admin] if self.admin else [])]:
            if hmac.compare_digest(digest, key.digest):
                found = key
        return found
