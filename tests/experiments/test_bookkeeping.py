"""The experiment's parts together, as the pipeline and the admin API use them: assignment counted apart from
overrides, weights at run time, shadow sampling and agreement, reports; starting one while another runs, and
stopped experiments' numbers, in the process and in a real Redis. The router alone: ``test_router.py``."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from service.experiments.admin import ExperimentRunningError, UnservedModelError
from service.experiments.arms import UnknownArmError
from service.experiments.definition import ExperimentDefinition
from service.experiments.parts import ExperimentParts
from service.experiments.router import Route
from service.experiments.state import NoSuchExperimentError
from service.experiments.store import LocalStore, RedisStore
from tests.conftest import REDIS_URL
from tests.waiting import wait_until

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
OTHER = ExperimentDefinition.model_validate(
    {
        "name": "other",
        "arms": [
            {"name": "accelerated", "weight": 1},
            {"name": "d32", "backend": "accelerated", "params": {"max_draft": 32}, "weight": 3},
        ],
        "shadow": {"arm": "autoregressive", "sample_rate": 1.0},
    }
)


def manager(definition: ExperimentDefinition | None = DEFINITION, seed: int = 0) -> ExperimentParts:
    experiments = ExperimentParts.build("accelerated", LocalStore(), "test", rng=random.Random(seed))
    asyncio.run(experiments.admin.open(definition))
    return experiments


def routed(
    experiments: ExperimentParts,
    requested: str | None,
    user_id: str | None,
    session_id: str | None,
    alternatives: bool = False,
    model: str | None = None,
) -> Route:
    """A request routed as the pipeline routes it: the router's route, sampled for the shadow arm, counted."""
    route = experiments.shadow.sample(experiments.router.route(requested, user_id, session_id, alternatives, model))
    experiments.tally.assigned(route)
    return route


def test_without_an_experiment_the_default_serves_and_names_resolve() -> None:
    experiments = manager(None)
    route = routed(experiments, None, "u1", None, alternatives=False)
    assert (route.arm.name, route.experiment, route.kind, route.shadow) == ("accelerated", None, "default", None)
    assert routed(experiments, "autoregressive", None, None, False).kind == "override"
    assert routed(experiments, None, None, None, alternatives=True).arm.name == "beam"
    with pytest.raises(UnknownArmError, match="draft32"):
        routed(experiments, "draft32", None, None, False)


def test_assignment_is_sticky_weighted_and_counted_apart_from_overrides() -> None:
    experiments = manager()
    users = [f"user-{i}" for i in range(4000)]
    first = {u: routed(experiments, None, u, None, False).arm.name for u in users}
    assert all(routed(experiments, None, u, "any session", False).arm.name == first[u] for u in users[:500])
    shares = Counter(first.values())
    assert set(shares) == {"accelerated", "autoregressive"}  # weight 0: draft32 gets nobody
    assert abs(shares["accelerated"] / len(users) - 0.5) < 0.03
    session = routed(experiments, None, None, "session-9", False)
    assert session.kind == "sticky" and session.experiment == "ab"
    unkeyed = Counter(routed(experiments, None, None, None, False).kind for _ in range(100))
    assert unkeyed == {"random": 100}
    override = routed(experiments, "draft32", "user-1", None, False)
    assert (override.arm.params.max_draft, override.experiment, override.kind) == (32, None, "override")
    experiments.tally.record(override, 0.01, "ok", 1)
    assert experiments.tally.stats.series() == []  # an override is not the experiment's numbers
    experiments.tally.record(routed(experiments, None, "user-1", None, False), 0.01, "ok", 1)
    assert experiments.tally.stats.series() == [first["user-1"]]


def test_a_weight_change_moves_only_the_users_it_must() -> None:
    experiments = manager()
    users = [f"user-{i}" for i in range(3000)]
    before = {u: routed(experiments, None, u, None, False).arm.name for u in users}
    asyncio.run(experiments.admin.set_weights("ab", {"accelerated": 80, "autoregressive": 20}))
    after = {u: routed(experiments, None, u, None, False).arm.name for u in users}
    moved = [u for u in users if before[u] != after[u]]
    assert all(before[u] == "autoregressive" and after[u] == "accelerated" for u in moved)
    assert abs(len(moved) / len(users) - 0.30) < 0.03
    with pytest.raises(ValueError, match="negative"):
        asyncio.run(experiments.admin.set_weights("ab", {"accelerated": -1}))
    with pytest.raises(ValueError, match=r"left out \(draft32\), but their weights are 0"):
        asyncio.run(experiments.admin.set_weights("ab", {"accelerated": 0, "autoregressive": 0}))
    with pytest.raises(UnknownArmError):
        asyncio.run(experiments.admin.set_weights("ab", {"quantum": 1}))
    with pytest.raises(NoSuchExperimentError):
        asyncio.run(experiments.admin.set_weights("other", {"accelerated": 1}))


def test_shadow_is_sampled_and_its_agreement_reported() -> None:
    experiments = manager()
    routes = [routed(experiments, None, f"u{i}", None, False) for i in range(2000)]
    shadowed = [r for r in routes if r.shadow is not None]
    assert all(r.arm.name == "accelerated" and r.shadow.name == "autoregressive" for r in shadowed)
    assert abs(len(shadowed) / sum(r.arm.name == "accelerated" for r in routes) - 0.25) < 0.05
    agreed = experiments.tally.record_shadow(shadowed[0], [("a b", "A b", "A b"), ("c d", "C d.", "C d")])
    assert agreed == (1, 1)
    for route in routes[:300]:
        experiments.tally.record(
            route, 0.01 if route.arm.name == "accelerated" else 0.02, "ok", 1, stages={"queue": 0.001}
        )
    report = asyncio.run(experiments.reports.report("ab"))
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
    experiments.tally.record(routed(experiments, None, "u", None, False), 0.01, "ok", 1)
    asyncio.run(experiments.admin.stop("ab"))
    assert routed(experiments, None, "u", None, False).kind == "default"
    report = asyncio.run(experiments.reports.report("ab"))
    assert report["status"] == "stopped" and sum(arm["requests"] for arm in report["arms"]) == 1
    with pytest.raises(NoSuchExperimentError):
        asyncio.run(experiments.admin.stop("ab"))
    restarted = asyncio.run(experiments.admin.start(DEFINITION))
    assert restarted.version == 3 and asyncio.run(experiments.reports.report("ab"))["arms"][0]["requests"] == 0


def serve(experiments: ExperimentParts, users: range, seconds: float = 0.01) -> None:
    """Requests of ``users`` assigned by the running experiment, recorded as served in ``seconds``."""
    for i in users:
        experiments.tally.record(routed(experiments, None, f"user-{i}", None, False), seconds, "ok", 1)


def numbers(report: dict) -> dict[str, tuple[int, float | None]]:
    return {arm["name"]: (arm["requests"], arm["latency_ms"]["p50"]["value"]) for arm in report["arms"]}


def test_another_experiment_starts_only_in_place_of_the_running_one_whose_numbers_stay() -> None:
    experiments = manager()
    serve(experiments, range(100))
    ab = asyncio.run(experiments.reports.report("ab"))
    with pytest.raises(ExperimentRunningError, match="'ab' is running"):
        asyncio.run(experiments.admin.start(OTHER))
    assert experiments.router.state.name == "ab" and experiments.router.state.running
    other = asyncio.run(experiments.admin.start(OTHER, replace=True))
    assert other.weights == {"accelerated": 25.0, "d32": 75.0}  # the file's 1:3, as shares
    routes = [routed(experiments, None, f"user-{i}", None, False) for i in range(10)]
    assert {r.experiment for r in routes} == {"other"} and {r.arm.name for r in routes} == {"accelerated", "d32"}
    route = next(r for r in routes if r.arm.name == "d32")
    serve(experiments, range(40), 0.02)
    experiments.tally.record_shadow(route, [("a b", "A b", "A b.")])
    replaced = asyncio.run(experiments.reports.report("ab"))
    assert replaced["status"] == "stopped" and replaced["stopped_at"] >= replaced["started_at"]
    assert numbers(replaced) == numbers(ab) and sum(r for r, _ in numbers(ab).values()) == 100
    assert replaced["sample_ratio"] == ab["sample_ratio"]
    # Stopped, then another started: no replace needed, and both stay readable.
    asyncio.run(experiments.admin.stop("other"))
    with pytest.raises(NoSuchExperimentError):
        asyncio.run(experiments.admin.set_weights("other", {"d32": 50}))
    stopped = asyncio.run(experiments.reports.report("other"))
    assert sum(r for r, _ in numbers(stopped).values()) == 40
    assert stopped["shadow"]["pairs"][0]["compared"] == 1  # d32 is no backend: its arm is the stopped one's
    asyncio.run(experiments.admin.start(DEFINITION))  # the same name as a stopped one: afresh
    assert sum(r for r, _ in numbers(asyncio.run(experiments.reports.report("ab"))).values()) == 0
    assert numbers(asyncio.run(experiments.reports.report("other"))) == numbers(stopped)
    with pytest.raises(NoSuchExperimentError):
        asyncio.run(experiments.reports.report("never"))


def test_replicas_keep_a_replaced_experiments_numbers_in_redis(redis_prefix: str) -> None:
    """Two replicas share one experiment through a real Redis; one replaces it with another: both still
    read the old one's numbers merged over both. All of this happens before either replica's first
    periodic publish (a second after it opened): each replica's numbers reach Redis as it leaves."""

    async def scenario() -> None:
        replicas = [
            ExperimentParts.build("accelerated", RedisStore(REDIS_URL, redis_prefix), name) for name in ("r1", "r2")
        ]
        try:
            for replica in replicas:
                await replica.admin.open(DEFINITION)
            first, second = replicas
            serve(first, range(30))
            serve(second, range(30, 50))
            with pytest.raises(ExperimentRunningError):
                await second.admin.start(OTHER)
            serve(first, range(50, 60))
            await second.admin.start(OTHER, replace=True)
            await wait_until(lambda: first.router.state.name == "other", 5, every=0.1, what="the replacement seen")
            for replica in replicas:
                report = await replica.reports.report("ab")
                assert report["status"] == "stopped" and report["scope"] == "cluster"
                assert report["replicas"]["reporting"] == 2
                assert sum(arm["requests"] for arm in report["arms"]) == 60
                assert sum(arm["assigned"] for arm in report["arms"]) == 60
            serve(first, range(5))
            assert sum(arm["requests"] for arm in (await second.reports.report("ab"))["arms"]) == 60
        finally:
            for replica in replicas:
                await replica.sync.close()

    asyncio.run(scenario())


VERSIONS = ExperimentDefinition.model_validate(
    {
        "name": "versions",
        "control": "old",
        "arms": [
            {"name": "old", "model": "gec-v2", "backend": "accelerated", "weight": 1},
            {"name": "new", "model": "gec-v3", "backend": "accelerated", "weight": 1},
        ],
        "shadow": {"arm": "old", "sample_rate": 1.0},
    }
)


def test_arms_run_on_their_models_and_an_experiment_naming_one_not_served_is_refused() -> None:
    experiments = ExperimentParts.build("accelerated", LocalStore(), "test", rng=random.Random(0))
    experiments.admin.model_names = lambda: ["gec-v3"]
    with pytest.raises(UnservedModelError, match="gec-v2"):
        asyncio.run(experiments.admin.open(VERSIONS))
    assert experiments.router.state is None
    experiments.admin.model_names = lambda: ["gec-v3", "gec-v2"]
    asyncio.run(experiments.admin.open(VERSIONS))
    assert experiments.admin.using("gec-v2") == experiments.admin.using("gec-v3") == "versions"
    routes = [routed(experiments, None, f"u{i}", None, alternatives=False) for i in range(40)]
    assert {route.arm.name: route.arm.model for route in routes} == {"old": "gec-v2", "new": "gec-v3"}
    named = routed(experiments, None, "u1", None, False, model="gec-v2")
    assert (named.kind, named.experiment, named.arm.model) == ("model", None, None)  # outside the experiment
    for route in routes:
        experiments.tally.record(route, 0.01, "ok", 1, 1)
        experiments.tally.record_shadow(route, [("a", "b", "b")])
    report = asyncio.run(experiments.reports.report("versions"))
    assert {arm["name"]: arm["model"] for arm in report["arms"]} == {"old": "gec-v2", "new": "gec-v3"}
    (pair,) = report["shadow"]["pairs"]
    assert pair["served"] == "new" and pair["expected"] is None and pair["same_model"] is False
    asyncio.run(experiments.admin.stop("versions"))
    assert experiments.admin.using("gec-v2") is None
