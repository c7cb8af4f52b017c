"""The router alone, as the pipeline calls it for every request: a named arm, alternatives, a named model and the
default, each outside the experiment; the running experiment's sticky weighted assignment by its bucket table; the
state it follows. It uses no store: the states are made here, as the store would hand them over."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.experiments.arms import UnknownArmError
from service.experiments.assignment import bucket_of
from service.experiments.definition import ExperimentDefinition
from service.experiments.router import Router
from service.experiments.state import ExperimentState

AB = ExperimentDefinition.model_validate(
    {
        "name": "ab",
        "control": "autoregressive",
        "arms": [
            {"name": "autoregressive", "weight": 1},
            {"name": "draft32", "backend": "accelerated", "params": {"max_draft": 32}, "weight": 3},
        ],
        "shadow": {"arm": "autoregressive", "sample_rate": 1.0},
    }
)


def following(state: ExperimentState | None, seed: int = 0) -> Router:
    router = Router("accelerated", random.Random(seed))
    if state is not None:
        router.follow(state)
    return router


def test_without_an_experiment_a_request_gets_what_it_names_else_the_default() -> None:
    router = following(None)
    default = router.route(None, "user-1", "session-1", alternatives=False)
    assert (default.arm.name, default.experiment, default.kind, default.shadow, default.run) == (
        "accelerated",
        None,
        "default",
        None,
        "",
    )
    override = router.route("autoregressive", "user-1", None, alternatives=True, model="gec-v2")
    assert (override.arm.name, override.kind) == ("autoregressive", "override")  # the named arm comes first
    assert router.route(None, None, None, alternatives=True, model="gec-v2").arm.name == "beam"
    named = router.route(None, "user-1", None, alternatives=False, model="gec-v2")
    assert (named.arm.name, named.kind, named.experiment) == ("accelerated", "model", None)
    assert router.known_arms() == ["accelerated", "autoregressive", "beam", "diverse", "relaxed"]
    with pytest.raises(UnknownArmError, match="draft32"):
        router.route("draft32", None, None, alternatives=False)


def test_the_running_experiment_assigns_by_its_bucket_table_sticky_by_user_then_session() -> None:
    state = ExperimentState.begin(AB)
    router = following(state)
    users = [f"user-{i}" for i in range(4000)]
    routes = {user: router.route(None, user, "a session", alternatives=False) for user in users}
    for user, route in routes.items():
        assert route.arm.name == AB.arms[state.table[bucket_of("ab", user)]].name
        assert (route.experiment, route.kind, route.run, route.shadow) == ("ab", "sticky", str(state.started_at), None)
    assert all(router.route(None, user, None, alternatives=False) == routes[user] for user in users[:200])
    shares = Counter(route.arm.name for route in routes.values())
    assert abs(shares["draft32"] / len(users) - 0.75) < 0.03
    by_session = router.route(None, None, "session-7", alternatives=False)
    assert by_session.arm.name == AB.arms[state.table[bucket_of("ab", "session-7")]].name
    assert by_session.kind == "sticky"
    draft32 = next(route.arm for route in routes.values() if route.arm.name == "draft32")
    assert (draft32.backend, draft32.params.max_draft, draft32.queue) == ("accelerated", 32, "draft32")
    assert router.resolve("draft32") == draft32 and router.known_arms()[:2] == ["autoregressive", "draft32"]
    assert router.route("draft32", "user-1", None, alternatives=False).kind == "override"


def test_a_request_without_a_key_gets_a_random_bucket_by_the_same_weights() -> None:
    state = ExperimentState.begin(AB)
    first, again = following(state, seed=3), following(state, seed=3)
    routes = [first.route(None, None, None, alternatives=False) for _ in range(2000)]
    assert {route.kind for route in routes} == {"random"}
    assert abs(sum(route.arm.name == "draft32" for route in routes) / len(routes) - 0.75) < 0.04
    assert [route.arm.name for route in routes[:50]] == [
        again.route(None, None, None, alternatives=False).arm.name for _ in range(50)
    ]


def test_it_routes_with_the_state_it_follows_last() -> None:
    state = ExperimentState.begin(AB)
    router = following(state)
    users = [f"user-{i}" for i in range(2000)]
    before = {user: router.route(None, user, None, alternatives=False).arm.name for user in users}
    router.follow(state.with_weights({"autoregressive": 50, "draft32": 50}))
    after = {user: router.route(None, user, None, alternatives=False).arm.name for user in users}
    moved = [user for user in users if before[user] != after[user]]
    assert moved and all((before[u], after[u]) == ("draft32", "autoregressive") for u in moved)
    router.follow(state.stopped())
    stopped = router.route(None, "user-1", None, alternatives=False)
    assert (stopped.arm.name, stopped.kind, stopped.experiment) == ("accelerated", "default", None)
    assert router.resolve("draft32").params.max_draft == 32  # a stopped experiment's arms still answer to a name
