"""``gecserve keys``: the stored form of an API key, for ``GECSERVE_API_KEYS_FILE``.

    gecserve keys hash [--name NAME] [--rate R --burst B] < key.txt   # prints sha256hex, or the entry

The key is read from stdin (one line; the line break is not part of it), so it shows neither in
the process list nor in the shell's history. A new key, saved and entered at once:

    python -c "import secrets; print(secrets.token_urlsafe(32))" | tee alice.key \\
        | gecserve keys hash --name alice >> keys.txt
"""

from __future__ import annotations

import argparse
import sys

from service.api.access.auth import KeyFileError, hash_key, parse_entry


def key_entry(name: str, key: str, limit: tuple[float, int] | None = None) -> str:
    """The keys-file entry of ``key`` under ``name``, as ``gecserve keys hash --name`` prints it: ``name:sha256hex``,
    or ``name:sha256hex:rate:burst`` with the key's own ``limit`` (requests per second, burst). Raises
    ``KeyFileError`` for an entry the service would refuse."""
    entry = f"{name}:{hash_key(key)}" + ("" if limit is None else f":{limit[0]:g}:{limit[1]}")
    parse_entry(entry, "the entry")
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve keys", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    hashing = commands.add_parser("hash", help="print the SHA-256 of a key read on stdin (or its keys-file entry)")
    hashing.add_argument("--name", help="print the whole entry, name:sha256hex, for this key name")
    hashing.add_argument("--rate", type=float, help="with --name and --burst: the key's own requests per second")
    hashing.add_argument("--burst", type=int, help="with --name and --rate: the key's own bucket size")
    args = parser.parse_args(argv)
    key = sys.stdin.readline().rstrip("\r\n")
    if not key:
        print("gecserve keys hash: no key on stdin", file=sys.stderr)
        return 2
    if args.name is None:
        if args.rate is not None or args.burst is not None:
            parser.error("--rate and --burst need --name")
        print(hash_key(key))
        return 0
    if (args.rate is None) != (args.burst is None):
        parser.error("give --rate and --burst together")
    try:
        entry = key_entry(args.name, key, None if args.rate is None else (args.rate, args.burst))
    except KeyFileError as error:
        print(f"gecserve keys hash: {error}", file=sys.stderr)
        return 2
    print(entry)
    return 0
