"""The engine-level benchmark commands end to end on the tiny model: tables printed, JSON written, figures sane."""

from __future__ import annotations

import json

import pytest

from bench.engine import decoding, diversity, preprocess, rules
from bench.engine.arrivals import arrival_times, references
from bench.engine.decoding import load_sources
from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import SENTENCES


def _decoding_rows(tmp_path, sentences, strategies: str) -> tuple[dict[tuple[str, str, int], dict], int]:
    """``bench decoding`` of ``strategies`` at batch sizes 1 and 4 on both cache layouts: its rows by
    (strategy, cache, batch), and how many sentences it decoded."""
    out = tmp_path / "decoding.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--batch-size", "1,4"]
    args += ["--strategies", strategies, "--cache", "compact,masked"]
    assert decoding.main([*args, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    return {(r["strategy"], r["cache"], r["batch"]): r for r in result["rows"]}, result["sentences"]


def test_bench_decoding_rows_and_greedy_agreement(tmp_path, sentences, capsys) -> None:
    rows, n = _decoding_rows(tmp_path, sentences, "greedy,aggressive,relaxed,unsplit,encoder,beam")
    assert len(rows) == 6 * 2 * 2
    for cache in ("compact", "masked"):
        for batch in (1, 4):
            assert rows[("aggressive", cache, batch)]["identical_to_greedy"] == f"{n}/{n}"
            assert (
                rows[("aggressive", cache, batch)]["passes_per_sent"]
                < rows[("greedy", cache, batch)]["passes_per_sent"]
            )
            assert rows[("greedy", cache, batch)]["tokens_per_pass"] == pytest.approx(1.0)
            assert rows[("unsplit", cache, batch)]["identical_to_greedy"] == f"{n}/{n}"
            # The encoder alone is part of every strategy's time. Compared by the median sentence (about 10 times
            # apart), not by throughput: the encoder's row lasts a few milliseconds in all, so one stall of a
            # loaded machine during it would turn a throughput comparison around.
            assert rows[("encoder", cache, batch)]["p50_ms"] < rows[("aggressive", cache, batch)]["p50_ms"]
    assert "speedup_vs_greedy" in capsys.readouterr().out


def test_bench_decoding_oracle_verifies_greedy_in_one_pass(tmp_path, sentences) -> None:
    rows, n = _decoding_rows(tmp_path, sentences, "greedy,oracle")
    assert len(rows) == 2 * 2 * 2
    for cache in ("compact", "masked"):
        for batch in (1, 4):
            oracle, greedy = rows[("oracle", cache, batch)], rows[("greedy", cache, batch)]
            # one pass verified every greedy output (its </s> included): the argmax reproduced greedy
            assert oracle["identical_to_greedy"] == f"{n}/{n}"
            assert oracle["passes_per_sent"] == 1.0
            assert oracle["tokens_per_pass"] == pytest.approx(greedy["passes_per_sent"])
            assert oracle["sent_per_s"] > 0 and oracle["speedup_vs_greedy"] > 0


def test_bench_decoding_replays_arrivals_through_the_batcher(tmp_path, sentences, capsys) -> None:
    out = tmp_path / "arrivals.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--batch-size", "2,4", "--rounds", "2"]
    args += ["--strategies", "greedy,aggressive,beam,sample", "--num-beams", "2", "--arrivals", "500,max"]
    assert decoding.main([*args, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = {(r["strategy"], r["batching"], r["batch"], r["offered_per_s"]): r for r in result["rows"]}
    strategies = ("greedy", "aggressive", "beam", "sample")
    assert set(rows) == {
        (s, b, n, r) for s in strategies for b in ("closed", "continuous") for n in (2, 4) for r in (500, "max")
    }
    for (_, _, batch, _), row in rows.items():
        assert row["identical"] == "yes"
        assert 0 < row["p50_ms"] <= row["p99_ms"]
        assert 1 <= row["rows_per_batch"] <= batch
    for strategy in strategies:  # all at once: batches fill
        assert rows[(strategy, "closed", 4, "max")]["rows_per_batch"] > 2
    assert "rows_per_batch" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="replays the engine's strategies"):
        decoding.main([*args[:-6], "--strategies", "unsplit", "--arrivals", "max"])


def test_replayed_outputs_are_checked_against_their_reference(sentences) -> None:
    """Greedy and aggressive against greedy decoding; beam and sampling against each sentence alone,
    which a closed batch of other settings would not match."""
    engine = Engine(FIXTURE_MODEL)
    sources = load_sources(engine, sentences, None)
    params = DecodeParams(num_beams=3, seed=0, temperature=2.0)
    greedy = [r.tokens for r in engine.generate(sources, "greedy")]
    assert references(engine, sources, "aggressive", params) == greedy
    sampled = references(engine, sources, "sample", params)
    assert sampled == [engine.generate([s], "sample", params)[0].tokens for s in sources]
    assert sampled != greedy


def test_arrivals_are_a_poisson_stream_of_the_given_rate() -> None:
    times = arrival_times(20_000, 400.0, seed=1)
    assert times == sorted(times)
    assert 20_000 / times[-1] == pytest.approx(400.0, rel=0.03)
    assert arrival_times(3, float("inf")) == [0.0, 0.0, 0.0]


def test_bench_decoding_ct2_peer(tmp_path, sentences) -> None:
    """A smoke run of the peer row (how many sentences two int8 schemes agree on depends on the CPU's
    integer kernels; ``tests/bench/test_peer_ct2.py`` checks the peer itself, in fp32)."""
    pytest.importorskip("ctranslate2", reason="build extra not installed")
    out = tmp_path / "peer.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--batch-size", "2"]
    args += ["--strategies", "greedy", "--peer-ct2", str(FIXTURE_MODEL / "hf"), "--json", str(out)]
    assert decoding.main(args) == 0
    peer = next(r for r in json.loads(out.read_text())["rows"] if r["strategy"] == "ct2-greedy")
    assert peer["identical_to_greedy"].endswith(f"/{len([s for s in SENTENCES * 3 if s])}")


def test_bench_preprocess(tmp_path, sentences) -> None:
    out = tmp_path / "pre.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--rounds", "1", "--json", str(out)]
    assert preprocess.main(args) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {r["mode"] for r in rows} == {"thread", "process"}
    assert len({r["paragraphs"] for r in rows}) == 1 and rows[0]["paragraphs"] > 0  # both modes ran the same input


def test_bench_rules_times_the_rule_stage_per_request(tmp_path) -> None:
    lines = tmp_path / "learner.txt"
    lines.write_text("She can sings well.\nThe weather is fine today.\n", encoding="utf-8")
    out = tmp_path / "rules.json"
    assert rules.main(["--model", str(FIXTURE_MODEL), "--input", str(lines), "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["requests"] == 2 and row["edited_%"] == 50.0 and 0 < row["p50_ms"] <= row["p99_ms"]


def test_bench_preprocess_over_sizes_writes_a_row_per_kind_and_a_plot(tmp_path, sentences) -> None:
    out, plot = tmp_path / "sizes.json", tmp_path / "sizes.png"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--sizes", "200,800", "--rounds", "1"]
    assert preprocess.main([*args, "--json", str(out), "--plot", str(plot)]) == 0
    result = json.loads(out.read_text())
    assert result["sizes"] == [200, 800]
    assert {r["kind"] for r in result["rows"]} >= {"learner prose", "emoji run", "one long word", "markdown"}
    assert all(r["200_ms"] > 0 and r["800_ms"] > 0 and r["growth_over_length"] > 0 for r in result["rows"])
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_bench_diversity_rows_against_plain_beam(tmp_path, sentences, capsys) -> None:
    out = tmp_path / "diversity.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--num-beams", "4", "--groups", "2,3,4"]
    args += ["--penalties", "0.5,4", "--batch-size", "4", "--rounds", "1", "--json", str(out)]
    assert diversity.main(args) == 0
    rows = {(r["groups"], r["penalty"]): r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {(1, 0.0), (2, 0.5), (2, 4.0), (4, 0.5), (4, 4.0)}  # 3 groups do not divide 4 beams
    plain = rows[(1, 0.0)]
    assert plain["best_as_beam"] == plain["cost_vs_beam"] == 1.0
    for row in rows.values():
        assert 1.0 <= row["distinct_outputs"] <= 4.0 and 0.0 <= row["all_distinct"] <= 1.0
        assert row["ms_per_sentence"] > 0
    assert rows[(4, 4.0)]["token_distance"] > plain["token_distance"]  # a strong penalty keeps the groups apart
    assert "token_distance" in capsys.readouterr().out


def test_mean_pairwise_distance_is_levenshtein_over_pairs() -> None:
    assert diversity.mean_pairwise_distance([[1, 2, 3], [1, 2, 3]]) == 0.0
    assert diversity.mean_pairwise_distance([[1, 2, 3], [1, 3], [4, 2, 3]]) == (1 + 1 + 2) / 3
    assert diversity.mean_pairwise_distance([["a"]]) == 0.0
