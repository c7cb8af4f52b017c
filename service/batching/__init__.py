"""Auto-batching of sentence jobs: the ``Batcher`` interface, its policy, and the local transport.

Model-free by design: a batcher hands lists of ``Job`` to the running batches its caller makes
(``running.py``; ``service.inference`` decodes them).
"""

from service.batching.batcher import (
    Batcher,
    BatcherHooks,
    BatcherStoppedError,
    BatchingError,
    DeadlineExceededError,
    EvictedError,
    JobFailedError,
    NullHooks,
    QueueFullError,
    QueueUnavailableError,
    WouldMissDeadlineError,
)
from service.batching.job import Job, Priority, deadline_in
from service.batching.local import LocalBatcher
from service.batching.policy import BatchPolicy, Selection, select_batch
from service.batching.running import ClosedBatch, RunningBatch, closed_batches

__all__ = [
    "BatchPolicy",
    "Batcher",
    "BatcherHooks",
    "BatcherStoppedError",
    "BatchingError",
    "ClosedBatch",
    "DeadlineExceededError",
    "EvictedError",
    "Job",
    "JobFailedError",
    "LocalBatcher",
    "NullHooks",
    "Priority",
    "QueueFullError",
    "QueueUnavailableError",
    "RunningBatch",
    "Selection",
    "WouldMissDeadlineError",
    "closed_batches",
    "deadline_in",
    "select_batch",
]
