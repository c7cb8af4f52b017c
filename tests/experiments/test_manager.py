"""Routing and the experiment's own numbers: overrides, stickiness, weights at run time, shadow, reports."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from service.experiments.arms import UnknownArmError
from service.experiments.definition import ExperimentDefinition
from service.experiments.manager import ExperimentManager, NoSuchExperimentError
from service.experiments.store import LocalStore

DEFINITION = ExperimentDefinition.model_validate(
    {
        "name": "ab",
        "control": "autoregressive",
        "arms": [
            {"name": "accelerated", "weight": 50},
            {"name": "autoregressive", "weight": 50},
            {"name": "draft32", "backend": "accelerated", "params": {"max_draft": 32}, "weight": 0},
        ],
        "shadow": {"arm": "autoregressive", "sample_rate": 0.25},
    }
)


def manager(definition: ExperimentDefinition | None = DEFINITION, seed: int = 0) -> ExperimentManager:
    experiments = ExperimentManager("accelerated", LocalStore(), "test", rng=random.Random(seed))
    asyncio.run(experiments.open(definition))
    return experiments


def test_without_an_experiment_the_default_serves_and_names_resolve() -> None:
    experiments = manager(None)
    route = experiments.route(None, "u1", None, alternatives=False)
    assert (route.arm.name, route.experiment, route.kind, route.shadow) == ("accelerated", None, "default", None)
    assert experiments.route("autoregressive", None, None, False).kind == "override"
    assert experiments.route(None, None, None, alternatives=True).arm.name == "beam"
    with pytest.raises(UnknownArmError, match="draft32"):
        experiments.route("draft32", None, None, False)


def test_assignment_is_sticky_weighted_and_counted_apart_from_overrides() -> None:
    experiments = manager()
    users = [f"user-{i}" for i in range(4000)]
    first = {u: experiments.route(None, u, None, False).arm.name for u in users}
    assert all(experiments.route(None, u, "any session", False).arm.name == first[u] for u in users[:500])
    shares = Counter(first.values())
    assert set(shares) == {"accelerated", "autoregressive"}  # weight 0: draft32 gets nobody
    assert abs(shares["accelerated"] / len(users) - 0.5) < 0.03
    session = experiments.route(None, None, "session-9", False)
    assert session.kind == "sticky" and session.experiment == "ab"
    unkeyed = Counter(experiments.route(None, None, None, False).kind for _ in range(100))
    assert unkeyed == {"random": 100}
    override = experiments.route("draft32", "user-1", None, False)
    assert (override.arm.params.max_draft, override.experiment, override.kind) == (32, None, "override")
    experiments.record(override, 0.01, "ok", 1)
    assert experiments.stats.series() == []  # an override is not the experiment's numbers
    experiments.record(experiments.route(None, "user-1", None, False), 0.01, "ok", 1)
    assert experiments.stats.series() == [first["user-1"]]


def test_a_weight_change_moves_only_the_users_it_must() -> None:
    experiments = manager()
    users = [f"user-{i}" for i in range(3000)]
    before = {u: experiments.route(None, u, None, False).arm.name for u in users}
    asyncio.run(experiments.set_weights("ab", {"accelerated": 80, "autoregressive": 20}))
    after = {u: experiments.route(None, u, None, False).arm.name for u in users}
    moved = [u for u in users if before[u] != after[u]]
    assert all(before[u] == "autoregressive" and after[u] == "accelerated" for u in moved)
    assert abs(len(moved) / len(users) - 0.30) < 0.03
    with pytest.raises(ValueError, match="negative"):
        asyncio.run(experiments.set_weights("ab", {"accelerated": -1}))
    with pytest.raises(ValueError, match="zero"):
        asyncio.run(experiments.set_weights("ab", {"accelerated": 0, "autoregressive": 0}))
    with pytest.raises(UnknownArmError):
        asyncio.run(experiments.set_weights("ab", {"quantum": 1}))
    with pytest.raises(NoSuchExperimentError):
        asyncio.run(experiments.set_weights("other", {"accelerated": 1}))


def test_shadow_is_sampled_and_its_agreement_reported() -> None:
    experiments = manager()
    routes = [experiments.route(None, f"u{i}", None, False) for i in range(2000)]
    shadowed = [r for r in routes if r.shadow is not None]
    assert all(r.arm.name == "accelerated" and r.shadow.name == "autoregressive" for r in shadowed)
    assert abs(len(shadowed) / sum(r.arm.name == "accelerated" for r in routes) - 0.25) < 0.05
    agreed = experiments.record_shadow(shadowed[0], [("a b", "A b", "A b"), ("c d", "C d.", "C d")])
    assert agreed == (1, 1)
    for route in routes[:300]:
        experiments.record(route, 0.01 if route.arm.name == "accelerated" else 0.02, "ok", 1, stages={"queue": 0.001})
    report = asyncio.run(experiments.report("ab"))
    assert report["scope"] == "local" and report["status"] == "running" and report["control"] == "autoregressive"
    arms = {arm["name"]: arm for arm in report["arms"]}
    assert arms["accelerated"]["requests"] + arms["autoregressive"]["requests"] == 300
    assert sum(arm["assigned"] for arm in arms.values()) == 2000
    (comparison,) = [c for c in report["comparisons"] if c["arm"] == "accelerated"]
    assert comparison["speedup"]["p50"]["value"] == pytest.approx(2.0, rel=0.03)
    (pair,) = report["shadow"]["pairs"]
    assert (pair["compared"], pair["agreed"], pair["expected"]) == (2, 1, 1.0)
    (disagreement,) = report["shadow"]["disagreements"]
    assert (disagreement["served"], disagreement["shadow"]) == ("C d.", "C d")
    assert not report["sample_ratio"]["mismatch"]
    assert set(report["timeline"]["arms"]) == {"accelerated", "autoregressive", "draft32"}


def test_stopping_routes_to_the_default_and_keeps_the_numbers() -> None:
    experiments = manager()
    experiments.record(experiments.route(None, "u", None, False), 0.01, "ok", 1)
    asyncio.run(experiments.stop("ab"))
    assert experiments.route(None, "u", None, False).kind == "default"
    report = asyncio.run(experiments.report("ab"))
    assert report["status"] == "stopped" and sum(arm["requests"] for arm in report["arms"]) == 1
    with pytest.raises(NoSuchExperimentError):
        asyncio.run(experiments.stop("ab"))
    restarted = asyncio.run(experiments.start(DEFINITION))
    assert restarted.version == 3 and asyncio.run(experiments.report("ab"))["arms"][0]["requests"] == 0
