"""The runtime's metric families, in one list: each is declared beside what it measures (the
class next to the code that counts), and :func:`declare_runtime_metrics` asks for every one at
start, so ``/metrics`` lists each family before its first sample."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from syncagent.runtime.client import RequestMetrics
from syncagent.runtime.discovery import CapabilityMetrics
from syncagent.runtime.events import EventMetrics
from syncagent.runtime.latency import LatencyMetrics
from syncagent.runtime.leader import LeaderMetrics
from syncagent.runtime.metrics import Metrics, Registry
from syncagent.runtime.process import ProcessMetrics
from syncagent.runtime.queue import QueueMetrics
from syncagent.runtime.retry import RetryMetrics
from syncagent.runtime.stages import StageMetrics
from syncagent.runtime.watch import WatchMetrics
from syncagent.runtime.watchset import WatchSetMetrics
from syncagent.runtime.workers import ReconcileMetrics

RUNTIME_METRICS: tuple[Callable[[Registry], Any], ...] = (
    ReconcileMetrics,
    LatencyMetrics,
    QueueMetrics,
    RequestMetrics,
    RetryMetrics,
    WatchMetrics,
    WatchSetMetrics,
    EventMetrics,
    LeaderMetrics,
    CapabilityMetrics,
    ProcessMetrics,
    StageMetrics,
)


def declare_runtime_metrics(metrics: Metrics) -> None:
    for family in RUNTIME_METRICS:
        metrics.of(family)
