"""The dashboard page in a real browser (Debian's Chromium, driven by Playwright) against a real server:
what it shows matches the JSON it reads, its form changes weights with the admin key, and it warns of
a sample-ratio mismatch and of numbers that cover only one replica."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
import yaml
from playwright.sync_api import Page

from tests.conftest import NEEDS_CHROMIUM, REDIS_URL
from tests.system.clients import post, wait_for
from tests.system.server import RunningServer, start_server
from tests.system.test_experiments import ADMIN, EXPERIMENT, KEY

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    NEEDS_CHROMIUM,
]

TEXTS = ["i saw a apple. We visited a island last week.", "Tom found a honest owl.", "He go home every days."]


@pytest.fixture(scope="module")
def ab_server(tmp_path_factory) -> Iterator[RunningServer]:
    folder = tmp_path_factory.mktemp("dashboard")
    path = folder / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    running = start_server(folder, experiment=path, admin_key=KEY, cache_size=0)
    yield running
    running.stop()


def report(server: RunningServer, name: str) -> dict:
    return httpx.get(f"{server.url}/v1/experiments/{name}", timeout=30).json()


def settled_report(server: RunningServer, name: str) -> dict:
    """The report once shadow comparisons (decoded after the answers) have stopped changing it."""
    last = report(server, name)
    deadline = time.monotonic() + 60
    while True:
        time.sleep(0.5)
        now = report(server, name)
        same = [a["requests"] for a in now["arms"]] == [a["requests"] for a in last["arms"]]
        if same and now["shadow"] == last["shadow"]:
            return now
        assert time.monotonic() < deadline, "the experiment's numbers never settled"
        last = now


def open_dashboard(browser, server: RunningServer) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server.url + "/dashboard")
    page.wait_for_selector("body[data-loaded]")
    assert errors == [], errors
    return page


def number(text: str) -> float:
    return float(text.strip().rstrip("%"))


def close(shown: str, value: float) -> bool:
    """A number as the page rounds it (2 decimals below 10, 1 below 100, none above)."""
    return abs(number(shown) - value) <= 0.0051 + 0.0051 * abs(value)


def cell(page: Page, table: str, row: str, field: str) -> str:
    return page.inner_text(f"#{table} tr[{row}] td[data-field='{field}'] .value")


def test_the_page_shows_what_the_json_says(ab_server, browser) -> None:
    for i in range(30):
        post(ab_server, "/v1/correct", {"text": TEXTS[i % 3], "client": {"user_id": f"user-{i}"}})
    data = settled_report(ab_server, "ab")
    page = open_dashboard(browser, ab_server)
    assert page.inner_text("#title") == "ab"
    for arm in data["arms"]:
        row = f"data-arm='{arm['name']}'"
        for field in ("assigned", "requests", "errors"):
            assert page.inner_text(f"#arms tr[{row}] td[data-field='{field}']") == str(arm[field])
        for q in ("p50", "p95", "p99"):
            estimate = arm["latency_ms"][q]
            assert close(cell(page, "arms", row, q), estimate["value"])
            low, high = re.findall(r"[\d.]+", page.inner_text(f"#arms tr[{row}] td[data-field='{q}'] .ci"))
            assert close(low, estimate["ci"][0]) and close(high, estimate["ci"][1])
        assert close(
            page.inner_text(f"#stages tr[{row}] td[data-field='inference']"),
            arm["stages_ms"]["inference"]["p50"]["value"],
        )
    (comparison,) = data["comparisons"]
    for q in ("p50", "p95", "p99"):
        assert close(cell(page, "comparison", f"data-arm='{comparison['arm']}'", q), comparison["speedup"][q]["value"])
    (pair,) = data["shadow"]["pairs"]
    shown = f"#agreement tr[data-pair='{pair['served']}/{pair['shadow']}']"
    assert page.inner_text(f"{shown} td[data-field='compared']") == str(pair["compared"]) != "0"
    assert (
        page.inner_text(f"{shown} td[data-field='agreement']")
        == "100.00%"
        == page.inner_text(f"{shown} td[data-field='expected']")
    )
    assert data["sample_ratio"]["mismatch"] is False
    assert page.get_attribute("#srm", "data-mismatch") == "false"
    assert "passes" in page.inner_text("#srm")
    assert page.get_attribute("#scope", "data-scope") == "local" == data["scope"]
    assert "this replica only" in page.inner_text("#scope")
    # one line per arm in each chart, with as many points as the timeline has buckets
    buckets = {point["t"] for points in data["timeline"]["arms"].values() for point in points}
    for chart in ("p50", "p95", "p99", "throughput"):
        legend = page.inner_text(f"#chart-{chart} .u-legend")
        assert all(arm["name"] in legend for arm in data["arms"])
        assert page.evaluate(f"charts['chart-{chart}'].plot.data.map((series) => series.length)") == [len(buckets)] * (
            1 + len(data["arms"])
        )
        # the time axis fits the data: its buckets, half a bucket beyond, at least a minute (one point drew two years)
        low, high = page.evaluate(
            f"[charts['chart-{chart}'].plot.scales.x.min, charts['chart-{chart}'].plot.scales.x.max]"
        )
        assert low <= min(buckets) and max(buckets) <= high
        assert high - low == pytest.approx(max(60, max(buckets) - min(buckets) + data["timeline"]["bucket_s"]))
    page.close()


def test_the_acceptance_section_shows_the_feedback_counted(ab_server, browser) -> None:
    """Writers accept every suggestion one arm made and dismiss the other's: the page shows each arm's counts, its
    rate with its interval, its rate by edit type, and the test against the control, as the JSON says."""
    for i in range(20):
        answer = post(ab_server, "/v1/correct", {"text": TEXTS[i % 3], "client": {"user_id": f"writer-{i}"}}).json()
        if answer["edits"]:
            action = "accepted" if answer["arm"] == "accelerated" else "dismissed"
            ids = [edit["id"] for edit in answer["edits"]]
            assert post(ab_server, "/v1/feedback", {"edit_ids": ids, "action": action}).status_code == 200
    data = report(ab_server, "ab")["acceptance"]
    assert data["arms"]["accelerated"]["accepted"] > 0 and data["arms"]["autoregressive"]["dismissed"] > 0
    page = open_dashboard(browser, ab_server)
    for name, arm in data["arms"].items():
        row = f"#acceptance tr[data-arm='{name}']"
        for field in ("accepted", "dismissed"):
            assert page.inner_text(f"{row} td[data-field='{field}']") == str(arm[field])
        assert close(page.inner_text(f"{row} td[data-field='rate'] .value"), 100 * arm["rate"])
        low, high = re.findall(r"[\d.]+", page.inner_text(f"{row} td[data-field='rate'] .ci"))
        assert close(low, 100 * arm["ci"][0]) and close(high, 100 * arm["ci"][1])
        for edit_type in arm["by_type"]:
            assert edit_type in page.inner_text(f"{row} td[data-field='by_type']")
    (test,) = data["comparisons"]
    verdict = page.inner_text(f"#acceptance tr[data-arm='{test['arm']}'] td[data-field='against_control']")
    assert f"p = {test['p_value']:.2g}".replace("e-0", "e-") in verdict or "p = " in verdict
    assert ("significant" in verdict) and (("not significant" in verdict) != test["significant"])
    page.close()


def test_the_categories_section_counts_each_arm_s_edits_by_category(ab_server, browser) -> None:
    for i in range(12):
        post(ab_server, "/v1/correct", {"text": TEXTS[i % 3], "client": {"user_id": f"sorted-{i}"}})
    arms = {arm["name"]: arm["categories"] for arm in report(ab_server, "ab")["arms"]}
    assert all(arms.values())
    page = open_dashboard(browser, ab_server)
    for name, codes in arms.items():
        by_category: dict[str, int] = {}
        for code, count in codes.items():
            category = code.split(":", 1)[1]
            by_category[category] = by_category.get(category, 0) + count
        for category, count in by_category.items():
            shown = page.inner_text(f"#categories tr[data-category='{category}'] td[data-arm='{name}']")
            assert shown.startswith(f"{count} ("), (name, category, shown)
    page.close()


def test_the_form_changes_weights_with_the_admin_key_only(ab_server, browser) -> None:
    page = open_dashboard(browser, ab_server)
    page.fill("#weight-inputs input[name='accelerated']", "80")
    page.fill("#weight-inputs input[name='autoregressive']", "20")
    page.fill("#admin-key", "not-the-key")
    page.click("#weights-form button")
    page.wait_for_selector("#weights-result[data-status='401']")
    assert "Refused (401)" in page.inner_text("#weights-result")
    assert report(ab_server, "ab")["arms"][0]["weight"] == 50

    page.fill("#admin-key", KEY)
    page.click("#weights-form button")
    page.wait_for_selector("#weights-result[data-status='200']")
    assert {a["name"]: a["weight"] for a in report(ab_server, "ab")["arms"]} == {
        "accelerated": 80,
        "autoregressive": 20,
    }
    page.wait_for_function(
        "document.querySelector(\"#arms tr[data-arm='accelerated'] td[data-field='weight']\")"
        ".textContent.startsWith('80 ')"
    )
    page.close()
    put = httpx.put(
        f"{ab_server.url}/v1/experiments/ab/weights",
        json={"weights": {"accelerated": 50, "autoregressive": 50}},
        headers=ADMIN,
    )
    assert put.status_code == 200


def test_a_sample_ratio_mismatch_is_flagged(ab_server, browser) -> None:
    """One user sends everything: sticky assignment puts it all on one arm of a 50/50 split."""
    started = httpx.post(
        f"{ab_server.url}/v1/experiments",
        params={"replace": "true"},
        json={**EXPERIMENT, "name": "skewed"},
        headers=ADMIN,
    )
    assert started.status_code == 201
    for _ in range(40):
        post(ab_server, "/v1/correct", {"text": TEXTS[0], "client": {"user_id": "the-only-user"}})
    data = settled_report(ab_server, "skewed")
    assert data["sample_ratio"]["mismatch"] is True
    page = open_dashboard(browser, ab_server)
    assert page.inner_text("#title") == "skewed"
    assert page.get_attribute("#srm", "data-mismatch") == "true"
    assert "Sample ratio mismatch" in page.inner_text("#srm")
    page.close()


def test_with_no_experiment_the_page_says_so(server, browser) -> None:
    page = open_dashboard(browser, server)
    assert page.is_visible("#none") and not page.is_visible("#experiment")
    assert page.inner_text("#default-backend") == "accelerated"
    page.close()


def test_two_replicas_show_the_same_merged_numbers(tmp_path, browser, redis_prefix: str) -> None:
    path = tmp_path / "ab.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    shared = {"experiment": path, "admin_key": KEY, "redis_url": REDIS_URL, "redis_prefix": redis_prefix}
    replicas = [start_server(tmp_path / name, cache_size=0, **shared) for name in ("a", "b")]
    try:
        for i in range(20):
            post(replicas[i % 2], "/v1/correct", {"text": TEXTS[i % 3], "client": {"user_id": f"user-{i}"}})

        def merged() -> bool:
            return sum(arm["requests"] for arm in report(replicas[0], "ab")["arms"]) >= 20

        wait_for(merged, 30, every=0.2, what="the replicas' numbers merged")
        for replica in replicas:
            page = open_dashboard(browser, replica)
            assert page.get_attribute("#scope", "data-scope") == "cluster"
            assert "Merged over 2 replica(s) reporting (2 live)" in page.inner_text("#scope")
            shown = [
                int(page.inner_text(f"#arms tr[data-arm='{arm}'] td[data-field='requests']"))
                for arm in ("accelerated", "autoregressive")
            ]
            assert sum(shown) == 20
            page.close()
    finally:
        for replica in replicas:
            replica.stop()
