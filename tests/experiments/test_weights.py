"""Weights at run time are shares in percent: the arms named take exactly their share, the arms left out
share the rest in proportion to their weights, and what cannot add up to 100 is refused naming the arms."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.experiments.definition import as_percent, change_weights

FIFTY_FIFTY = {"accelerated": 50.0, "autoregressive": 50.0}


def test_a_files_relative_weights_become_shares() -> None:
    assert as_percent({"accelerated": 1, "slow": 3}) == {"accelerated": 25.0, "slow": 75.0}
    assert as_percent({"a": 0, "b": 2}) == {"a": 0.0, "b": 100.0}


def test_one_arm_named_takes_its_share_and_the_other_the_rest() -> None:
    """The README's example: {"accelerated": 90} on a 50/50 experiment is 90/10 (it gave 64/36)."""
    assert change_weights(FIFTY_FIFTY, {"accelerated": 90}) == {"accelerated": 90.0, "autoregressive": 10.0}
    assert change_weights(FIFTY_FIFTY, {"autoregressive": 100}) == {"accelerated": 0.0, "autoregressive": 100.0}
    three = {"a": 50.0, "b": 30.0, "c": 20.0}
    assert change_weights(three, {"a": 20}) == pytest.approx({"a": 20.0, "b": 48.0, "c": 32.0})
    assert change_weights(three, {"c": 0, "a": 40}) == {"a": 40.0, "b": 60.0, "c": 0.0}
    assert list(change_weights(three, {"c": 10})) == ["a", "b", "c"]  # the arms' order is kept


def test_what_cannot_add_up_to_100_is_refused_naming_the_arms() -> None:
    with pytest.raises(ValueError, match=r"add up to 110, over 100 \(given: accelerated 90, autoregressive 20\)"):
        change_weights(FIFTY_FIFTY, {"accelerated": 90, "autoregressive": 20})
    with pytest.raises(ValueError, match=r"add up to 110, over 100 \(given: a 110\)"):
        change_weights({"a": 50, "b": 50, "c": 0}, {"a": 110})
    with pytest.raises(
        ValueError, match=r"every arm must add up to 100, not 4 \(given: accelerated 1, autoregressive 3\)"
    ):
        change_weights(FIFTY_FIFTY, {"accelerated": 1, "autoregressive": 3})
    with pytest.raises(ValueError, match=r"60 is left over for the arms left out \(b, c\), but their weights are 0"):
        change_weights({"a": 100, "b": 0, "c": 0}, {"a": 40})
    with pytest.raises(ValueError, match="finite and not negative"):
        change_weights(FIFTY_FIFTY, {"accelerated": -5})
    with pytest.raises(ValueError, match="finite and not negative"):
        change_weights(FIFTY_FIFTY, {"accelerated": float("nan")})
    # Nothing left over for arms whose weights are 0: they keep 0.
    assert change_weights({"a": 100, "b": 0, "c": 0}, {"a": 100}) == {"a": 100.0, "b": 0.0, "c": 0.0}


@st.composite
def experiments(draw: st.DrawFn) -> tuple[dict[str, float], dict[str, float]]:
    """Current shares of 2-6 arms, and a change that names some of them (not all) with shares that fit."""
    count = draw(st.integers(2, 6))
    names = [f"arm{i}" for i in range(count)]
    weights = draw(st.lists(st.integers(1, 100), min_size=count, max_size=count))
    current = as_percent(dict(zip(names, map(float, weights), strict=True)))
    named = draw(st.lists(st.sampled_from(names), min_size=1, max_size=count - 1, unique=True))
    shares = draw(
        st.lists(st.integers(0, 100), min_size=len(named), max_size=len(named)).filter(lambda s: sum(s) <= 100)
    )
    return current, dict(zip(named, map(float, shares), strict=True))


@given(experiments())
def test_the_shares_add_up_and_the_rest_follows_the_current_weights(case: tuple[dict, dict]) -> None:
    current, changes = case
    after = change_weights(current, changes)
    assert list(after) == list(current) and sum(after.values()) == pytest.approx(100.0)
    assert all(after[name] == share for name, share in changes.items())
    left_out = [name for name in current if name not in changes]
    rest = 100.0 - sum(changes.values())
    for name in left_out:
        assert after[name] == pytest.approx(rest * current[name] / sum(current[n] for n in left_out))
