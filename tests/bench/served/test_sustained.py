"""``python -m bench.served.sustained``: overload against a spawned server, refusals and recovery read back."""

from __future__ import annotations

import json

import pytest

from bench.served import sustained
from service.api.access.auth import KeyRing, load_keys
from tests.conftest import FIXTURE_MODEL


def test_recovery_is_the_first_probe_from_which_every_answer_is_normal() -> None:
    def probe(sent_s: float, status: int | str, seconds: float) -> dict:
        return {"sent_s": sent_s, "status": status, "seconds": seconds}

    probes = [probe(0.0, 503, 0.01), probe(0.1, 200, 0.5), probe(0.2, 200, 0.02), probe(0.3, 200, 0.03)]
    assert sustained.recovered_after(probes, normal_s=0.05) == 0.2
    assert sustained.recovered_after([*probes, probe(0.4, "ReadError", 0.01)], normal_s=0.05) is None
    assert sustained.recovered_after(probes, normal_s=1.0) == 0.1
    assert sustained.first_normal(probes, normal_s=0.05) == pytest.approx(0.22)  # sent at 0.2, answered 20 ms later
    assert sustained.first_normal(probes[:2], normal_s=0.05) is None


def test_with_keys_the_server_knows_drill_unlimited_and_greedy_at_its_limit() -> None:
    ring = KeyRing(load_keys(None, sustained._key_settings()["api_keys"]))
    drill, greedy = ring.identify(sustained.KEYS["drill"]), ring.identify(sustained.KEYS["greedy"])
    assert drill is not None and (drill.name, drill.rate) == ("drill", None)
    assert greedy is not None and (greedy.name, (greedy.rate, greedy.burst)) == ("greedy", sustained.GREEDY_LIMIT)


@pytest.mark.slow
@pytest.mark.server
def test_a_short_overload_is_refused_with_retry_after_and_the_service_recovers(tmp_path, monkeypatch, capsys):
    # A queue of 4 sentences decoded one at a time: 150 req/s of 3-sentence paragraphs is far past it.
    monkeypatch.setenv("GECSERVE_MAX_QUEUE", "4")
    monkeypatch.setenv("GECSERVE_MAX_BATCH_SIZE", "1")
    source = tmp_path / "input.txt"
    # Distinct sentences: identical ones in flight share one decode (and the cache), and would not load the queue.
    source.write_text("".join(f"He go home every days with {i} friends.\n" for i in range(600)))
    out = tmp_path / "sustained.json"
    args = ["--spawn", str(FIXTURE_MODEL), "--input", str(source), "--saturation", "50", "--baseline-s", "2"]
    assert sustained.main([*args, "--duration", "3", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    baseline, overload = result["rows"]
    assert baseline["statuses"].startswith("200:")
    assert "503:" in overload["statuses"] and overload["refusals_without_retry_after"] == 0
    # The generator kept its schedule: every request sent, the median one on time (one sending at half the rate
    # has its median request late by half the run), none late by the whole run. Bounds that tell a schedule kept
    # from one lost, with room for a stall of a loaded machine (the requests after it are late by up to its
    # length); not speed limits.
    assert overload["sent"] == overload["scheduled"]
    assert overload["lag_p50_ms"] < 250 and overload["lag_max_ms"] < 3000, overload
    # Served again once the load stops (how soon is the drill's figure, and depends on the machine).
    assert result["probes"] and result["probes"][-1]["status"] == 200
    assert "normal again" in capsys.readouterr().out
