"""The batcher's hooks recorded into Prometheus metrics and rolling stats."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client.parser import text_string_to_metric_families

from service.batching import BatchPolicy, Job, LocalBatcher, QueueFullError, closed_batches
from service.observability import Metrics, MetricsHooks, RollingStats


def test_local_batcher_feeds_metrics_and_stats() -> None:
    metrics, stats = Metrics(), RollingStats()

    def decode(worker: int, jobs: list[Job]) -> list[int]:
        return [len(job.tokens) for job in jobs]

    async def main() -> None:
        policy = BatchPolicy(max_batch_size=4, max_wait_ms=20, max_queue=4)
        batcher = LocalBatcher(
            policy, closed_batches(decode), name="tiny/aggressive", hooks=MetricsHooks(metrics, stats)
        )
        batcher.start()
        submits = [asyncio.create_task(batcher.submit(Job(tokens=[1] * n))) for n in (1, 2, 3, 4)]
        await asyncio.sleep(0)
        with pytest.raises(QueueFullError):
            await batcher.submit(Job(tokens=[1]))
        assert await asyncio.gather(*submits) == [1, 2, 3, 4]
        await batcher.stop()

    asyncio.run(main())
    values = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
    }
    q = ("queue", "tiny/aggressive")
    assert values[("gecserve_batch_size_sum", (q,))] == 4
    assert values[("gecserve_batch_tokens_sum", (q,))] == 16
    assert values[("gecserve_queue_wait_seconds_count", (q,))] == 4
    assert values[("gecserve_batch_duration_seconds_count", (q,))] == 1
    assert values[("gecserve_jobs_dropped_total", (q, ("reason", "queue_full")))] == 1
    assert values[("gecserve_queue_depth", (q,))] == 0
    assert values[("gecserve_in_flight", (q,))] == 0
    assert stats.window("tiny/aggressive", 60)["mean_batch_size"] == 4
