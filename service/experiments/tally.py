"""This replica's numbers of the experiment it follows: what the experiment's report is made of.

Per arm: the requests the experiment assigned (the sample-ratio check's counts, since the last weight change), the
finished ones' latencies, outcomes and stages (``RollingStats``), their edits' ERRANT categories, and the shadow
arm's agreement with the served one, with the latest disagreements. Requests the experiment did not assign (an
override, alternatives, a named model, the default) are not its numbers. ``sync.py`` publishes them
(``export``) and starts them afresh when the replica follows another run (``follow``).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict, deque
from collections.abc import Mapping
from typing import Any

from service.experiments.router import Route
from service.experiments.state import ExperimentState
from service.observability.stats import RollingStats

__all__ = ["STATS_BUCKET_S", "STATS_WINDOWS", "Tally"]

STATS_BUCKET_S = 5.0
STATS_WINDOWS = (60.0, 300.0)


class Tally:
    """Counts the current experiment's requests, edits and shadow agreement on this replica."""

    def __init__(self, keep_disagreements: int = 50) -> None:
        self.state: ExperimentState | None = None  # the run counted
        self.stats = RollingStats(windows=STATS_WINDOWS, bucket_s=STATS_BUCKET_S)
        self.keep_disagreements = keep_disagreements
        self._assigned: Counter[str] = Counter()
        self._categories: defaultdict[str, Counter[str]] = defaultdict(Counter)  # by arm: edits by ERRANT code
        self._agreement: dict[tuple[str, str], list[int]] = {}  # (served, shadow) -> [compared, agreed]
        self._disagreements: deque[dict[str, Any]] = deque(maxlen=keep_disagreements)

    def follow(self, state: ExperimentState) -> None:
        """Count ``state``'s run from now on: afresh for another run, the assignments afresh after a weight
        change (the sample-ratio check compares them with the new weights)."""
        previous = self.state
        if previous is None or (previous.name, previous.started_at) != (state.name, state.started_at):
            self.stats.reset()
            self._agreement.clear()
            self._disagreements.clear()
            self._assigned.clear()
            self._categories.clear()
        elif previous.weights_since != state.weights_since:
            self._assigned.clear()
        self.state = state

    def assigned(self, route: Route) -> None:
        """A request routed: counted when the experiment assigned it."""
        if route.experiment is not None:
            self._assigned[route.arm.name] += 1

    def record(
        self,
        route: Route,
        seconds: float,
        outcome: str,
        sentences: int = 0,
        edits: int = 0,
        stages: Mapping[str, float] | None = None,
        categories: Mapping[str, int] | None = None,
    ) -> None:
        """A finished request the experiment assigned (others are not its numbers), with its edits' ERRANT
        categories (their codes, counted)."""
        if self._current(route):
            self.stats.record_request(route.arm.name, seconds, outcome, sentences, edits, stages)
            if categories:
                self._categories[route.arm.name].update(categories)

    def record_shadow(self, route: Route, comparisons: list[tuple[str, str, str]]) -> tuple[int, int]:
        """Sentences the shadow arm also decoded, as (sentence, served output, shadow output);
        returns (agreed, disagreed)."""
        if route.shadow is None or not self._current(route):
            return 0, 0
        counts = self._agreement.setdefault((route.arm.name, route.shadow.name), [0, 0])
        agreed = 0
        for sentence, served, shadow in comparisons:
            counts[0] += 1
            if served == shadow:
                agreed += 1
            else:
                self._disagreements.appendleft(
                    {
                        "at": time.time(),
                        "sentence": sentence,
                        "served_arm": route.arm.name,
                        "served": served,
                        "shadow_arm": route.shadow.name,
                        "shadow": shadow,
                    }
                )
        counts[1] += agreed
        return agreed, len(comparisons) - agreed

    def _current(self, route: Route) -> bool:
        return route.experiment is not None and self.state is not None and route.experiment == self.state.name

    def export(self, replica: str) -> dict[str, Any]:
        """The numbers as ``replica`` publishes them: mergeable with other replicas' (``report.py``)."""
        assert self.state is not None
        return {
            "replica": replica,
            "experiment": self.state.name,
            "started_at": self.state.started_at,
            "weights_since": self.state.weights_since,
            "stats": self.stats.export(),
            "assigned": dict(self._assigned),
            "categories": {arm: dict(counts) for arm, counts in self._categories.items()},
            "agreement": [[served, shadow, *counts] for (served, shadow), counts in self._agreement.items()],
            "disagreements": list(self._disagreements),
        }
