"""What the experiments API reads: the overview, and an experiment's report merged over every replica.

A report is the current experiment's or a stopped one's, by name, as it was when it stopped: every replica's
published numbers of that run (``tally.py``) merged, per arm latencies with their intervals, the comparison with
the control, the sample-ratio check, shadow agreement and the latest disagreements, a timeline, and writers'
acceptance of the arms' edits (``feedback.py``). When the store is unreachable, the current experiment's report
falls back to this replica's own numbers, saying so (``scope: local``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from redis.exceptions import RedisError

from service.experiments.analysis import acceptance, compare, sample_ratio, summarise
from service.experiments.arms import BACKENDS, Arm
from service.experiments.feedback import FeedbackLedger
from service.experiments.state import ExperimentState, NoSuchExperimentError
from service.experiments.sync import ExperimentSync
from service.experiments.tally import STATS_BUCKET_S, STATS_WINDOWS
from service.observability.stats import RollingStats

__all__ = ["ExperimentReports"]


class ExperimentReports:
    """Reads the experiments: the overview, and reports merged over the replicas ``sync``'s store reaches."""

    def __init__(self, sync: ExperimentSync, feedback: FeedbackLedger | None = None) -> None:
        self.sync = sync
        self.feedback = feedback

    async def overview(self) -> dict[str, Any]:
        """The backends, the default, and the current experiment (if any)."""
        state = self.sync.state
        return {
            "scope": self.sync.scope,
            "default_backend": self.sync.router.default.name,
            "experiment": None
            if state is None
            else {"name": state.name, "running": state.running, "weights": state.weights, "version": state.version},
            "backends": {
                name: {"strategy": b.strategy, "description": b.description, "exact": b.exact}
                for name, b in BACKENDS.items()
            },
        }

    async def report(self, name: str) -> dict[str, Any]:
        """Everything the dashboard shows for ``name``, the current experiment or a stopped one, merged over
        every replica that reports (``RedisError`` for a stopped one when the store is unreachable)."""
        sync, store = self.sync, self.sync.store
        state = sync.state
        if state is None or state.name != name:
            current = await store.load()  # started on another replica since this one last looked?
            if current is not None and current.name == name:
                await sync.switch(current)
                state = current
        if state is not None and state.name == name:
            numbers, scope, live = [sync.numbers()], store.scope, 1
            try:
                others = await store.collect(name)
                live = await store.live_replicas()
                numbers += [n for n in others if n["replica"] != sync.replica and n["started_at"] == state.started_at]
            except RedisError as error:
                sync.store_failed(error)
                scope = "local"
        else:
            state = await store.retired(name)
            if state is None:
                raise NoSuchExperimentError(name)
            numbers = [n for n in await store.collect(name) if n["started_at"] == state.started_at]
            scope, live = store.scope, await store.live_replicas()
        report = self._merged(state, numbers, scope, live)
        if self.feedback is not None:
            report["acceptance"] = await self._acceptance(state, report["control"])
        return report

    def _merged(self, state: ExperimentState, numbers: list[dict[str, Any]], scope: str, live: int) -> dict[str, Any]:
        """The report of ``state`` from the replicas' ``numbers``."""
        merged = RollingStats(windows=STATS_WINDOWS, bucket_s=STATS_BUCKET_S)
        assigned: Counter[str] = Counter()
        categories: defaultdict[str, Counter[str]] = defaultdict(Counter)
        agreement: dict[tuple[str, str], list[int]] = {}
        disagreements: list[dict[str, Any]] = []
        for part in numbers:
            merged.absorb(part["stats"])
            for arm_name, counts in part.get("categories", {}).items():
                categories[arm_name].update(counts)
            if part["weights_since"] == state.weights_since:
                assigned.update(part["assigned"])
            for served, shadow, compared, agreed in part["agreement"]:
                counts = agreement.setdefault((served, shadow), [0, 0])
                counts[0] += compared
                counts[1] += agreed
            disagreements += part["disagreements"]
        report = self._report(state, merged, assigned, agreement, disagreements, scope, live, len(numbers))
        for arm in report["arms"]:
            arm["categories"] = dict(categories[arm["name"]].most_common())
        return report

    async def _acceptance(self, state: ExperimentState, control: str) -> dict[str, Any]:
        """Writers' acceptance of each arm's edits, compared with the control's; unknown (``unavailable``) while
        the feedback store is unreachable: the latency numbers still answer."""
        assert self.feedback is not None
        names = [arm.name for arm in state.definition.arms]
        try:
            counts, feedback_scope = await self.feedback.counts(state.name, str(state.started_at)), self.feedback.scope
        except RedisError as error:
            self.sync.store_failed(error)
            counts, feedback_scope = {}, "unavailable"
        return {"scope": feedback_scope, **acceptance(counts, control, names)}

    def _report(
        self,
        state: ExperimentState,
        merged: RollingStats,
        assigned: Counter[str],
        agreement: dict[tuple[str, str], list[int]],
        disagreements: list[dict[str, Any]],
        scope: str,
        live: int,
        reporting: int,
    ) -> dict[str, Any]:
        control = state.definition.control_arm
        total_weight = sum(state.weights.values())
        own = {definition.name: definition.arm() for definition in state.definition.arms}
        arms, totals = [], {}
        for arm in own.values():
            totals[arm.name] = merged.totals(arm.name)
            arms.append(
                {
                    "name": arm.name,
                    "backend": arm.backend,
                    "model": arm.model,
                    "params": dict(arm.overrides),
                    "exact": arm.exact,
                    "weight": state.weights[arm.name],
                    "share": state.weights[arm.name] / total_weight,
                    "assigned": assigned.get(arm.name, 0),
                    "requests_per_s": merged.window(arm.name, 60)["requests_per_s"],
                    **summarise(totals[arm.name]),
                }
            )
        comparisons = [
            {"arm": name, "control": control, **compare(totals[control], totals[name])}
            for name in totals
            if name != control
        ]
        shadow = None
        if state.definition.shadow is not None:
            shadow = {
                **state.definition.shadow.model_dump(),
                "pairs": self._pairs(own, agreement),
                "disagreements": sorted(disagreements, key=lambda d: -d["at"])[: self.sync.tally.keep_disagreements],
            }
        return {
            "name": state.name,
            "description": state.definition.description,
            "status": "running" if state.running else "stopped",
            "started_at": state.started_at,
            "stopped_at": state.stopped_at,
            "weights_since": state.weights_since,
            "version": state.version,
            "scope": scope,
            "replicas": {"live": live, "reporting": reporting},
            "control": control,
            "arms": arms,
            "comparisons": comparisons,
            "sample_ratio": sample_ratio(assigned, state.weights),
            "shadow": shadow,
            "timeline": {
                "bucket_s": merged.bucket_s,
                "arms": {name: merged.timeline(name) for name in totals},
            },
        }

    @staticmethod
    def _pairs(own: dict[str, Arm], agreement: dict[tuple[str, str], list[int]]) -> list[dict[str, Any]]:
        """Each (served, shadow) pair of arms: how often they agreed, and whether 100% is expected."""
        pairs = []
        for (served, shadow_arm), (compared, agreed) in sorted(agreement.items()):
            pair = [own.get(name) or Arm.of_backend(name) for name in (served, shadow_arm)]
            exact = all(arm.exact for arm in pair) and pair[0].model == pair[1].model
            pairs.append(
                {
                    "served": served,
                    "shadow": shadow_arm,
                    "compared": compared,
                    "agreed": agreed,
                    "agreement": agreed / compared if compared else None,
                    "expected": 1.0 if exact else None,
                    "same_model": pair[0].model == pair[1].model,
                }
            )
        return pairs
