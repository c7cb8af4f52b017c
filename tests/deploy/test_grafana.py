"""The Grafana dashboards and the Prometheus scrape config agree with what the service exports.

Every PromQL expression of every dashboard panel (and of its template variables) may name only
sample names the service really exposes (``gecserve_x_total`` for a counter ``gecserve_x``,
``_bucket``/``_count``/``_sum`` for a histogram), and only labels those samples carry, in
selectors (``{arm="..."}``) and in groupings (``by (...)``, ``ignoring (...)``...). What the
service exposes is read from a real ``Metrics`` after one call of each observation method.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from service.observability.metrics import Metrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARDS = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
DATASOURCES = DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yaml"
DASHBOARD_PROVIDERS = DEPLOY / "grafana" / "provisioning" / "dashboards" / "gecserve.yaml"
PROMETHEUS = DEPLOY / "prometheus" / "prometheus.yml"
DATASOURCE_UID = "prometheus"
GRAFANA_VARIABLES = {"__rate_interval", "__interval", "__range", "__interval_ms", "__range_s"}

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
METRIC = re.compile(r"\b(gecserve_[a-zA-Z0-9_:]+)")
SELECTOR = re.compile(r"\b(gecserve_[a-zA-Z0-9_:]+)\s*\{([^}]*)\}")
MATCHER = re.compile(r"^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*\"\"\s*$")
GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)")
AGGREGATOR = re.compile(r"\b(sum|avg|min|max|count|stddev|stdvar|group|topk|bottomk|quantile|count_values)\s*$")
LABEL_VALUES = re.compile(r"^\s*label_values\(\s*(gecserve_[a-zA-Z0-9_:]+)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$")
SUFFIX = re.compile(r"_(bucket|count|sum|total|created)$")
VARIABLE = re.compile(r"\$\{?([a-zA-Z_][a-zA-Z0-9_]*)")


def exported() -> dict[str, frozenset[str]]:
    """Every sample name a ``Metrics`` exposes, with the labels its samples carry."""
    metrics = Metrics()
    with metrics.in_progress("correct"):
        pass
    metrics.observe_request("http", "correct", "exp", "accelerated", "ok", 0.01)
    metrics.observe_stage("inference", "exp", "accelerated", 0.005)
    metrics.observe_sentences("exp", "accelerated", 1, [2])
    metrics.assigned("exp", "accelerated", "sticky")
    metrics.output_dropped("exp", "accelerated", "repetition")
    metrics.shadow_compared("exp", "accelerated", "autoregressive", 1, 1)
    metrics.shadow_drop("exp", "busy")
    metrics.feedback("exp", "accelerated", "gec-default", "grammar", "accepted")
    metrics.unknown_feedback("http")
    metrics.edit_category("exp", "accelerated", "R:VERB:SVA")
    metrics.observe_queue_wait("accelerated", 0.001)
    metrics.observe_batch("accelerated", 2, 32)
    metrics.observe_batch_duration("accelerated", 0.004, 0.003)
    metrics.observe_decode("accelerated", 3, [4, 2, 1])
    metrics.drop_jobs("accelerated", "queue_full")
    metrics.batch_error("accelerated", "engine")
    metrics.shared_sentences("accelerated", 2)
    metrics.reviewed("accelerated", 1, 1)
    metrics.set_queue("accelerated", 1, 2)
    metrics.cache_lookup("memory", 1, 1)
    metrics.cache_error("get")
    metrics.set_stream("accelerated", 3, 1)
    metrics.workers_live.set(2)
    metrics.worker_job("accelerated", "decoded")
    metrics.rate_limited("editor-a")
    metrics.shed("loop_lag")
    families = list(text_string_to_metric_families(metrics.render().decode()))
    silent = [family.name for family in families if not family.samples]
    assert not silent, f"observe these in exported() too, so their samples can be checked: {silent}"
    labels: dict[str, set[str]] = {}
    for family in families:
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    return {name: frozenset(names) for name, names in labels.items()}


EXPORTED = exported()


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, those inside collapsed rows too."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def expressions(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every panel target and every query variable."""
    for panel in panels(dashboard):
        for target in panel.get("targets", []):
            yield f"panel {panel.get('title')!r} target {target.get('refId')}", target["expr"]
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            query = variable["query"]
            yield f"variable {variable['name']!r}", query["query"] if isinstance(query, dict) else query


def group(text: str, start: int) -> tuple[int, int]:
    """(start, end) of the balanced parenthesised group opening at ``text[start]``."""
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return start, index + 1
    raise ValueError(f"unbalanced parentheses from {start}: {text!r}")


def group_before(text: str, end: int) -> tuple[int, int]:
    """(start, end) of the balanced parenthesised group closing at ``text[end - 1]``."""
    depth = 0
    for index in range(end - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[index], 0)
        if depth == 0:
            return index, end
    raise ValueError(f"unbalanced parentheses before {end}: {text!r}")


def problems(expr: str, defined: set[str]) -> list[str]:
    """What ``expr`` names that the service does not export (empty when it is all real)."""
    found: list[str] = []
    bare = STRING.sub('""', expr)  # label values cannot be mistaken for names or operators
    for opening, closing in ("()", "{}", "[]"):
        if bare.count(opening) != bare.count(closing):
            found.append(f"unbalanced {opening}{closing}")
    if found:
        return found  # not PromQL: nothing below can be read from it
    for name in VARIABLE.findall(expr):
        if name not in defined and name not in GRAFANA_VARIABLES:
            found.append(f"variable ${name} is not defined")
    values = LABEL_VALUES.match(bare)
    if values:
        metric, label = values.groups()
        return found + check(metric, [label])
    names = METRIC.findall(bare)
    if not names:
        found.append("names no gecserve_* metric")
    for name in names:
        found += check(name, [])
    for name, matchers in SELECTOR.findall(bare):
        labels = []
        for matcher in filter(None, (part.strip() for part in matchers.split(","))):
            parsed = MATCHER.match(matcher)
            if parsed is None:
                found.append(f"unreadable matcher {matcher!r} on {name}")
            else:
                labels.append(parsed.group(1))
        found += check(name, labels)
    for clause in GROUPING.finditer(bare):
        keyword, listed = clause.groups()
        labels = [label.strip() for label in listed.split(",") if label.strip()]
        if keyword in ("by", "without"):
            rest, before = bare[clause.end() :], bare[: clause.start()].rstrip()
            after = len(bare) - len(rest.lstrip())
            if rest.lstrip().startswith("(") and AGGREGATOR.search(before):
                start, end = group(bare, after)  # sum by (labels) (argument)
            elif before.endswith(")"):
                start, end = group_before(bare, len(before))  # sum (argument) by (labels)
            else:
                found.append(f"{keyword} ({listed}) aggregates nothing")
                continue
            for name in METRIC.findall(bare[start:end]):
                found += check(name, labels, f"{keyword} ({listed})")
        else:  # vector matching: each label is on one of the operands
            for label in labels:
                if not any(label in EXPORTED.get(name, ()) for name in names):
                    found.append(f"{keyword} ({listed}): no metric of the expression has label {label!r}")
    for match in re.finditer(r"\bhistogram_quantile\s*\(", bare):
        start, end = group(bare, match.end() - 1)
        argument = bare[start:end]
        if not re.search(r"_bucket\b", argument) or not re.search(r"\bby\s*\([^)]*\ble\b", argument):
            found.append("histogram_quantile needs _bucket samples summed by (le, ...)")
    return list(dict.fromkeys(found))


def family(name: str) -> str:
    """The metric a sample name belongs to: ``gecserve_x`` for ``gecserve_x_total``, ``gecserve_x_bucket``..."""
    return SUFFIX.sub("", name)


def check(name: str, labels: list[str], where: str = "") -> list[str]:
    if name not in EXPORTED:
        near = sorted(sample for sample in EXPORTED if family(sample) == family(name))
        return [f"{name} is not exported (its family exports: {', '.join(near) or 'nothing'})"]
    context = f" in {where}" if where else ""
    return [
        f"{name} has no label {label!r}{context} (it has {', '.join(sorted(EXPORTED[name]))})"
        for label in labels
        if label not in EXPORTED[name]
    ]


def datasource_refs(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "datasource":
                yield value
            else:
                yield from datasource_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from datasource_refs(item)


# -- the checker itself -------------------------------------------------------------------------


def test_exported_names_follow_prometheus_suffixes() -> None:
    assert "gecserve_sentences_total" in EXPORTED and "gecserve_sentences" not in EXPORTED
    bucket = EXPORTED["gecserve_request_duration_seconds_bucket"]
    assert bucket == {"le", "api", "route", "experiment", "arm", "outcome"}
    assert "le" not in EXPORTED["gecserve_request_duration_seconds_count"]
    assert EXPORTED["gecserve_queue_depth"] == {"queue"}


@pytest.mark.parametrize(
    ("expr", "wanted"),
    [
        ("sum(rate(gecserve_sentences[1m]))", "gecserve_sentences is not exported"),
        ("rate(gecserve_batch_size_total[1m])", "gecserve_batch_size_total is not exported"),
        ('rate(gecserve_assignments_total{queue="x"}[1m])', "has no label 'queue'"),
        ("sum by (tenant) (rate(gecserve_assignments_total[1m]))", "has no label 'tenant' in by (tenant)"),
        ("sum(rate(gecserve_assignments_total[1m])) by (tenant)", "has no label 'tenant' in by (tenant)"),
        ("histogram_quantile(0.5, sum by (arm) (rate(gecserve_stage_duration_seconds_bucket[1m])))", "(le, ...)"),
        ("sum by (le) (rate(gecserve_stage_duration_seconds_count[1m]))", "has no label 'le'"),
        ('gecserve_queue_depth{queue=~"$nope"}', "variable $nope is not defined"),
        ("sum(rate(gecserve_sentences_total[1m])", "unbalanced ()"),
        ("label_values(gecserve_queue_depth, arm)", "has no label 'arm'"),
    ],
)
def test_the_checker_catches(expr: str, wanted: str) -> None:
    assert any(wanted in problem for problem in problems(expr, set())), problems(expr, set())


def test_the_checker_passes_real_queries() -> None:
    expr = (
        'sum by (arm, outcome) (rate(gecserve_request_duration_seconds_count{outcome!="ok", arm=~"a,b"}[5m]))'
        " / ignoring (outcome) group_left sum by (arm) (rate(gecserve_request_duration_seconds_count[5m]))"
    )
    assert problems(expr, set()) == []
    assert problems("label_values(gecserve_request_duration_seconds_count, experiment)", set()) == []


# -- the deployed files -------------------------------------------------------------------------


def test_there_are_dashboards() -> None:
    assert DASHBOARDS, "no dashboard JSON in deploy/grafana/dashboards"


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.name)
def test_every_query_names_exported_metrics_and_labels(path: Path) -> None:
    dashboard = load(path)
    defined = {variable["name"] for variable in dashboard.get("templating", {}).get("list", [])}
    found = [f"{where}: {problem}" for where, expr in expressions(dashboard) for problem in problems(expr, defined)]
    assert not found, f"{path.name}:\n" + "\n".join(found)


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.name)
def test_dashboard_uses_only_the_provisioned_datasource(path: Path) -> None:
    dashboard = load(path)
    refs = list(datasource_refs(dashboard))
    assert refs
    wrong = [ref for ref in refs if not isinstance(ref, dict) or ref.get("uid") != DATASOURCE_UID]
    assert not wrong, f"datasources other than uid {DATASOURCE_UID!r}: {wrong}"
    ids = [panel["id"] for panel in panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    assert dashboard["uid"] and dashboard["schemaVersion"] >= 39


def test_the_ab_dashboard_has_per_arm_latency_quantiles() -> None:
    exprs = [expr for _, expr in expressions(load(DEPLOY / "grafana" / "dashboards" / "gecserve-ab.json"))]
    per_arm = "sum by (le, arm) (rate(gecserve_request_duration_seconds_bucket"
    for phi in ("0.5", "0.95", "0.99"):
        wanted = f"histogram_quantile({phi}, {per_arm}"
        assert any(expr.startswith(wanted) for expr in exprs), f"no per-arm p{phi} latency panel"


def test_datasource_provisioning() -> None:
    config = yaml.safe_load(DATASOURCES.read_text(encoding="utf-8"))
    (source,) = config["datasources"]
    assert source["uid"] == DATASOURCE_UID and source["type"] == "prometheus" and source["isDefault"] is True
    assert source["url"] == "http://prometheus:9090"
    scrape = yaml.safe_load(PROMETHEUS.read_text(encoding="utf-8"))["global"]["scrape_interval"]
    assert source["jsonData"]["timeInterval"] == scrape, "$__rate_interval must know the scrape interval"


def test_dashboard_provisioning() -> None:
    config = yaml.safe_load(DASHBOARD_PROVIDERS.read_text(encoding="utf-8"))
    (provider,) = config["providers"]
    assert provider["type"] == "file" and provider["options"]["path"].startswith("/")


def test_prometheus_scrapes_the_service_metrics() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text(encoding="utf-8"))
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "gecserve"]
    assert job["metrics_path"] == "/metrics"
    assert job["scrape_interval"] == "5s"
    (discovery,) = job["dns_sd_configs"]
    assert (discovery["names"], discovery["type"], discovery["port"]) == (["gateway"], "A", 8000)
