"""The running experiment's shared state: its definition, current weights and bucket table.

Every replica routes with the same state: kept in the process without Redis, in Redis with it
(``store.py``). ``version`` grows with every change, so replicas notice one by comparing it.
Weights are shares in percent adding up to 100 (the definition's relative weights, scaled). A
stopped experiment's state is kept, with when it stopped, so that its numbers stay readable.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

from service.experiments.assignment import initial_table, rebalance
from service.experiments.definition import ExperimentDefinition, as_percent

__all__ = ["ExperimentState", "NoSuchExperimentError"]


class NoSuchExperimentError(KeyError):
    """No experiment of that name is known (or it is not running, for changes)."""


@dataclass(frozen=True)
class ExperimentState:
    definition: ExperimentDefinition
    weights: dict[str, float]  # arm name -> share in percent, in the definition's arm order
    table: list[int]  # bucket -> index of the owning arm in definition.arms
    version: int = 1
    started_at: float = field(default_factory=time.time)  # wall clock, seconds
    weights_since: float = field(default_factory=time.time)  # sample-ratio counts start here
    running: bool = True
    stopped_at: float | None = None  # wall clock, seconds

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def arm_names(self) -> list[str]:
        return [arm.name for arm in self.definition.arms]

    @classmethod
    def begin(cls, definition: ExperimentDefinition, version: int = 1) -> ExperimentState:
        weights = as_percent(definition.weights())
        now = time.time()
        return cls(definition, weights, initial_table(list(weights.values())), version, now, now)

    def with_weights(self, weights: dict[str, float]) -> ExperimentState:
        """New weights for the same arms; only the buckets the change needs move."""
        ordered = {name: float(weights[name]) for name in self.arm_names}
        table = rebalance(self.table, list(ordered.values()))
        return replace(self, weights=ordered, table=table, version=self.version + 1, weights_since=time.time())

    def stopped(self) -> ExperimentState:
        return replace(self, running=False, version=self.version + 1, stopped_at=time.time())

    def to_json(self) -> str:
        return json.dumps(
            {
                "definition": self.definition.model_dump(mode="json"),
                "weights": self.weights,
                "table": self.table,
                "version": self.version,
                "started_at": self.started_at,
                "weights_since": self.weights_since,
                "running": self.running,
                "stopped_at": self.stopped_at,
            }
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> ExperimentState:
        data: dict[str, Any] = json.loads(text)
        return cls(
            definition=ExperimentDefinition.model_validate(data["definition"]),
            weights={str(k): float(v) for k, v in data["weights"].items()},
            table=[int(i) for i in data["table"]],
            version=int(data["version"]),
            started_at=float(data["started_at"]),
            weights_since=float(data["weights_since"]),
            running=bool(data["running"]),
            stopped_at=None if data.get("stopped_at") is None else float(data["stopped_at"]),
        )
