"""API keys: entries, the keys file, identification, and ``gecserve keys hash``."""

from __future__ import annotations

import hashlib
import io

import pytest
from pydantic import SecretStr

from service.api.access.auth import KeyFileError, KeyRing, hash_key, load_keys, parse_entry, same_secret
from service.commands import keys as keys_command

ALICE, BOB = "alice-key-0123", "bob-key-4567"


def test_hash_is_sha256_hex() -> None:
    assert hash_key(ALICE) == hashlib.sha256(ALICE.encode()).hexdigest()


def test_entries_with_and_without_their_own_limit() -> None:
    plain = parse_entry(f"alice:{hash_key(ALICE)}", "x")
    assert (plain.name, plain.rate, plain.burst) == ("alice", None, None)
    limited = parse_entry(f" bob:{hash_key(BOB).upper()}:2.5:7 ", "x")
    assert (limited.name, limited.rate, limited.burst) == ("bob", 2.5, 7)
    assert limited.digest == hashlib.sha256(BOB.encode()).digest()


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        (f"alice:{ALICE}", "64 hex digits"),  # the key itself, not its hash
        ("alice", "expected name:sha256hex"),
        (f"al ice:{hash_key(ALICE)}", "name must be"),
        (f"admin:{hash_key(ALICE)}", "not 'admin'"),
        (f"alice:{hash_key(ALICE)}:fast:3", "rate must be a number"),
        (f"alice:{hash_key(ALICE)}:0:3", "above 0"),
        (f"alice:{hash_key(ALICE)}:1", "expected"),
    ],
)
def test_bad_entries_are_refused_saying_where(entry: str, fragment: str) -> None:
    with pytest.raises(KeyFileError, match=fragment) as caught:
        parse_entry(entry, "keys.txt:3")
    assert str(caught.value).startswith("keys.txt:3:")


def test_file_and_inline_keys_load_together(tmp_path) -> None:
    path = tmp_path / "keys.txt"
    path.write_text(f"# team keys\n\nalice:{hash_key(ALICE)}\n  # old\n")
    keys = load_keys(path, f" bob:{hash_key(BOB)}:1:2 ,")
    assert [k.name for k in keys] == ["alice", "bob"]
    with pytest.raises(KeyFileError, match="used twice"):
        load_keys(path, f"alice:{hash_key(BOB)}")
    with pytest.raises(KeyFileError, match="listed twice"):
        load_keys(path, f"carol:{hash_key(ALICE)}")
    with pytest.raises(KeyFileError, match=f"{path}:3"):
        path.write_text(f"alice:{hash_key(ALICE)}\n\nnonsense\n")
        load_keys(path, None)
    with pytest.raises(KeyFileError, match="cannot read"):
        load_keys(tmp_path / "missing.txt", None)


def test_the_ring_identifies_keys_and_the_admin_key() -> None:
    ring = KeyRing(load_keys(None, f"alice:{hash_key(ALICE)},bob:{hash_key(BOB)}"), SecretStr("root-key"))
    assert ring.enabled
    assert ring.identify(ALICE).name == "alice" and ring.identify(BOB).name == "bob"
    assert ring.identify("root-key") is ring.admin and ring.admin.name == "admin"
    assert ring.identify(ALICE + "x") is None and ring.identify("") is None
    assert ring.identify(hash_key(ALICE)) is None  # the stored hash is not a key
    assert not KeyRing([], SecretStr("root-key")).enabled  # an admin key alone closes nothing


def test_same_secret() -> None:
    assert same_secret("abc", "abc") and not same_secret("abc", "abcd") and not same_secret("", "abc")


def run_keys(monkeypatch, capsys, stdin: str, *argv: str) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    status = keys_command.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_keys_hash_command(monkeypatch, capsys) -> None:
    assert run_keys(monkeypatch, capsys, ALICE + "\n", "hash") == (0, hash_key(ALICE) + "\n", "")
    entry = ("hash", "--name", "alice", "--rate", "2", "--burst", "5")
    status, out, _ = run_keys(monkeypatch, capsys, ALICE + "\r\n", *entry)
    assert status == 0 and parse_entry(out, "out") == parse_entry(f"alice:{hash_key(ALICE)}:2:5", "x")
    status, _, err = run_keys(monkeypatch, capsys, "\n", "hash")
    assert status == 2 and "no key" in err
    status, _, err = run_keys(monkeypatch, capsys, ALICE, "hash", "--name", "admin")
    assert status == 2 and "not 'admin'" in err
