"""The experiment's parts, built together: the router the pipeline routes every request with, and the
bookkeeping beside it, one job each (the module map of docs/architecture.md lists them).

``ExperimentParts.build`` wires them: the router and the shadow sampler draw from one random stream; the sync
hands every state it adopts to the router and the tally; the admin and the reports go through the sync's store.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from service.experiments.admin import ExperimentAdmin
from service.experiments.feedback import FeedbackLedger
from service.experiments.report import ExperimentReports
from service.experiments.router import Router
from service.experiments.shadowing import ShadowSampler
from service.experiments.store import ExperimentStore
from service.experiments.sync import ExperimentSync
from service.experiments.tally import Tally

__all__ = ["ExperimentParts"]


@dataclass(frozen=True)
class ExperimentParts:
    router: Router  # per request: which arm serves it
    shadow: ShadowSampler  # per assigned request: whether the shadow arm decodes it too
    tally: Tally  # this replica's numbers of the experiment
    sync: ExperimentSync  # the shared state, adopted and kept in step with the store
    admin: ExperimentAdmin  # open, start, stop, weights
    reports: ExperimentReports  # the overview and the reports merged over the replicas

    @classmethod
    def build(
        cls,
        default_backend: str,
        store: ExperimentStore,
        replica: str,
        feedback: FeedbackLedger | None = None,
        rng: random.Random | None = None,
    ) -> ExperimentParts:
        """The parts of a replica called ``replica`` sharing experiments through ``store``, routing to
        ``default_backend`` outside an experiment, with writers' ``feedback`` in the reports."""
        rng = rng or random.Random()
        router, tally = Router(default_backend, rng), Tally()
        sync = ExperimentSync(store, router, tally, replica)
        reports = ExperimentReports(sync, feedback)
        return cls(router, ShadowSampler(router, rng), tally, sync, ExperimentAdmin(sync), reports)
