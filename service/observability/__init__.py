"""Observability: Prometheus metrics, rolling percentiles for the stats endpoints, JSON logs."""

from service.observability.hooks import MetricsHooks
from service.observability.logging import JsonFormatter, configure_logging
from service.observability.metrics import LATENCY_BUCKETS, NO_EXPERIMENT, REQUEST_STAGES, Metrics
from service.observability.stats import RollingStats

__all__ = [
    "LATENCY_BUCKETS",
    "NO_EXPERIMENT",
    "REQUEST_STAGES",
    "JsonFormatter",
    "Metrics",
    "MetricsHooks",
    "RollingStats",
    "configure_logging",
]
