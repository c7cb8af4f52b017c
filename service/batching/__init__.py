"""Auto-batching of sentence jobs: the ``Batcher`` interface, its policy, and the local transport.

Model-free by design: a batcher hands lists of ``Job`` to a runner supplied by the caller.
"""

from service.batching.batcher import (
    Batcher,
    BatcherHooks,
    BatcherStoppedError,
    BatchingError,
    DeadlineExceededError,
    EvictedError,
    NullHooks,
    QueueFullError,
    WouldMissDeadlineError,
)
from service.batching.job import Job, Priority, deadline_in
from service.batching.local import LocalBatcher
from service.batching.policy import BatchPolicy, Selection, select_batch
from service.batching.session import Runner

__all__ = [
    "BatchPolicy",
    "Batcher",
    "BatcherHooks",
    "BatcherStoppedError",
    "BatchingError",
    "DeadlineExceededError",
    "EvictedError",
    "Job",
    "LocalBatcher",
    "NullHooks",
    "Priority",
    "QueueFullError",
    "Runner",
    "Selection",
    "WouldMissDeadlineError",
    "deadline_in",
    "select_batch",
]
