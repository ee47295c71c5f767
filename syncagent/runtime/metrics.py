"""The agent's Prometheus metrics on ``prometheus_client``: a :class:`Registry` per process (or
per test) of counters, gauges and histograms, rendered in text format 0.0.4.

The wrappers keep the agent's calling style (labels as keywords, ``inc(amount, **labels)``)
and add what the agent and its tests read back (``value``, ``total``, ``count``); storage,
escaping and exposition are prometheus_client's. ``collectors`` run before each render: gauges
of what is measured at scrape time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import prometheus_client
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

from syncagent.runtime import process
from syncagent.runtime.stages import StageMetrics

# The agent exposes the series it always has; a `_created` series per counter and histogram
# would double /metrics for nothing its dashboards read.
prometheus_client.disable_created_metrics()

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4

DEFAULT_BUCKETS: tuple[float, ...] = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5),
    *(1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)


class _Metric:
    """One family: ``labels`` checked against the declared names, naming the metric."""

    def __init__(self, name: str, labelnames: tuple[str, ...], family: Any) -> None:
        self.name = name
        self.labelnames = labelnames
        self._family = family

    def _child(self, labels: dict[str, str]) -> Any:
        if set(labels) != set(self.labelnames):
            raise ValueError(
                f"metric {self.name}: labels {sorted(labels)} do not match "
                f"declared {list(self.labelnames)}"
            )
        if not self.labelnames:
            return self._family
        return self._family.labels(**{n: str(labels[n]) for n in self.labelnames})

    def _samples(self, suffix: str = "") -> list[tuple[dict[str, str], float]]:
        wanted = self.name if not suffix else f"{self._family._name}{suffix}"
        return [
            (s.labels, s.value)
            for family in self._family.collect()
            for s in family.samples
            if s.name == wanted
        ]


class Counter(_Metric):
    def inc(self, amount: float = 1.0, **labels: str) -> None:
        if amount < 0:
            raise ValueError(f"counter {self.name}: cannot decrease by {amount}")
        self._child(labels).inc(amount)

    def value(self, **labels: str) -> float:
        self._child(labels)  # checks the names
        want = {n: str(v) for n, v in labels.items()}
        return sum(v for got, v in self._samples() if got == want)

    def total(self, **match: str) -> float:
        """Sum over every label set whose labels include ``match``."""
        return sum(
            v for got, v in self._samples() if all(got.get(k) == w for k, w in match.items())
        )


class Gauge(Counter):
    def set(self, value: float, **labels: str) -> None:
        self._child(labels).set(float(value))

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        self._child(labels).inc(amount)

    def dec(self, amount: float = 1.0, **labels: str) -> None:
        self._child(labels).dec(amount)


class Histogram(_Metric):
    def observe(self, value: float, **labels: str) -> None:
        self._child(labels).observe(value)

    def count(self, **labels: str) -> int:
        self._child(labels)
        want = {n: str(v) for n, v in labels.items()}
        return int(sum(v for got, v in self._samples("_count") if got == want))


class Registry:
    """A set of metrics rendered together on ``/metrics``."""

    def __init__(self) -> None:
        self._registry = prometheus_client.CollectorRegistry(auto_describe=True)
        self._names: set[str] = set()
        self.collectors: list[Callable[[], None]] = []

    def _claim(self, name: str) -> None:
        if name in self._names:
            raise ValueError(f"metric {name} is already registered")
        self._names.add(name)

    def counter(self, name: str, help: str, labelnames: Sequence[str] = ()) -> Counter:
        self._claim(name)
        family = prometheus_client.Counter(name, help, labelnames, registry=self._registry)
        return Counter(name, tuple(labelnames), family)

    def gauge(self, name: str, help: str, labelnames: Sequence[str] = ()) -> Gauge:
        self._claim(name)
        family = prometheus_client.Gauge(name, help, labelnames, registry=self._registry)
        return Gauge(name, tuple(labelnames), family)

    def histogram(
        self,
        name: str,
        help: str,
        labelnames: Sequence[str] = (),
        *,
        buckets: Sequence[float] = DEFAULT_BUCKETS,
    ) -> Histogram:
        if list(buckets) != sorted(set(buckets)):
            raise ValueError(f"histogram {name}: buckets must be strictly increasing")
        if "le" in labelnames:
            raise ValueError(f"histogram {name}: 'le' is a reserved label")
        self._claim(name)
        family = prometheus_client.Histogram(
            name, help, labelnames, buckets=tuple(buckets), registry=self._registry
        )
        return Histogram(name, tuple(labelnames), family)

    def render(self) -> str:
        for collect in self.collectors:
            collect()
        return generate_latest(self._registry).decode()


class Metrics:
    """The agent's metrics, one registry per process (or per test)."""

    def __init__(self, registry: Registry | None = None) -> None:
        r = self.registry = registry or Registry()
        self.reconciles = r.counter(
            "syncagent_reconcile_total",
            "Reconciles by controller and result (success, error, conflict, requeue, not_leader).",
            ("controller", "result"),
        )
        self.reconcile_duration = r.histogram(
            "syncagent_reconcile_duration_seconds",
            "Duration of reconciles by controller.",
            ("controller",),
        )
        self._add_apply_metrics(r)
        self._add_runtime_metrics(r)
        self._add_process_metrics(r)
        self.stages = StageMetrics(r)  # where a change's time goes (runtime/stages.py)

    def _add_apply_metrics(self, r: Registry) -> None:
        """What the apply engine and the fight detector did."""
        self.apply_actions = r.counter(
            "syncagent_apply_actions_total",
            "Server-side apply outcomes by kind and result "
            "(created, configured, unchanged, conflict, error).",
            ("kind", "result"),
        )
        self.conflicts = r.counter(
            "syncagent_apply_conflicts_total",
            "Apply conflicts with another field manager, by kind and that manager (its name when "
            "it is one of ours or well known, else other).",
            ("kind", "manager"),
        )
        self.field_fights = r.counter(
            "syncagent_field_fights_total",
            "Field fights: another field manager kept taking back fields the agent applies, so "
            "the agent left them to it for a backoff (declared, or gone on after a backoff), "
            "by kind and that manager (its name when it is one of ours or well known, else other).",
            ("kind", "manager"),
        )
        self.create_fallback = r.gauge(
            "syncagent_create_read_first",
            "1 while creates read before they write, because admission refused the create-only "
            "write at the start-up check (docs/write-protocol.md section 4); 0 once it passed.",
        )
        self.yielded = r.counter(
            "syncagent_apply_yielded_total",
            "Conflicting fields left out of an apply during a fight's backoff, by kind and the "
            "field manager holding them (its name when it is one of ours or well known, else other).",
            ("kind", "manager"),
        )

    def _add_runtime_metrics(self, r: Registry) -> None:
        """Work queues, API requests, watches, events, leadership, capabilities, latency."""
        self.graph_status_latency = r.histogram(
            "syncagent_graph_change_to_status_seconds",
            "From the watch delivering a graph at a new generation to the first status write "
            "of that graph at that generation.",
            # Up to an hour: a first convergence of 1,000 graphs queues them for many minutes
            # (492 of 1,000 graphs waited longer than 600 s: bench/README.md).
            buckets=(
                *(0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0),
                *(1200.0, 1800.0, 3600.0),
            ),
        )
        self.queue_depth = r.gauge(
            "syncagent_workqueue_depth", "Keys waiting in a work queue.", ("queue",)
        )
        self.queue_adds = r.counter(
            "syncagent_workqueue_adds_total", "Keys added to a work queue.", ("queue",)
        )
        self.queue_retries = r.counter(
            "syncagent_workqueue_retries_total",
            "Keys re-queued with backoff after an error.",
            ("queue",),
        )
        self.api_requests = r.counter(
            "syncagent_api_requests_total",
            "Kubernetes API requests by verb, resource, dry run and HTTP status code.",
            ("verb", "resource", "dry_run", "code"),
        )
        self.api_retries = r.counter(
            "syncagent_api_retries_total",
            "API requests sent again after a transient failure, by verb and reason "
            "(HTTP status code, connect, reset, timeout).",
            ("verb", "reason"),
        )
        self.watch_relists = r.counter(
            "syncagent_watch_relists_total",
            "Full relists of a watched resource (start, 410 Gone).",
            ("resource",),
        )
        self.watch_unsynced = r.gauge(
            "syncagent_watch_unsynced",
            "1 while a running watch has not listed in full (its list is denied, not found or "
            "failing): the graphs of its namespace wait for it.",
            ("watch",),
        )
        self.cache_objects = r.gauge(
            "syncagent_cache_objects", "Objects held in a watch cache.", ("resource",)
        )
        self.events = r.counter(
            "syncagent_events_total",
            "Kubernetes Events emitted by type, reason and outcome (created, aggregated, error, "
            "not_leader).",
            ("type", "reason", "outcome"),
        )
        self.leader = r.gauge(
            "syncagent_leader", "1 while this process holds the leader Lease.", ("lease",)
        )
        self.capabilities = r.gauge("syncagent_capability", "1 when a capability is on.", ("name",))

    def _add_process_metrics(self, r: Registry) -> None:
        """What a long run could leak (bench/soak.py samples them), measured at scrape time."""
        self.resident_memory = r.gauge(
            "syncagent_process_resident_memory_bytes", "Resident memory of the agent process."
        )
        self.open_fds = r.gauge("syncagent_process_open_fds", "Open file descriptors.")
        self.tasks = r.gauge("syncagent_asyncio_tasks", "asyncio tasks of the event loop.")
        self.memo_entries = r.gauge(
            "syncagent_memo_entries",
            "Entries of an in-memory table other than the watch caches (convergence: the apply "
            "engine's convergence records; events: Events remembered for aggregation; fights: "
            "tracked field fights; latency: graph generations waiting for a status write).",
            ("memo",),
        )
        self._memos: dict[str, Callable[[], int]] = {}
        r.collectors.append(self._collect_process)

    def measure_memo(self, memo: str, size: Callable[[], int]) -> None:
        """Report ``size()`` as ``syncagent_memo_entries{memo=...}`` at each scrape."""
        self._memos[memo] = size

    def _collect_process(self) -> None:
        self.resident_memory.set(process.resident_bytes())
        self.open_fds.set(process.open_fds())
        self.tasks.set(process.asyncio_tasks())
        for memo, size in list(self._memos.items()):
            self.memo_entries.set(size(), memo=memo)

    def render(self) -> str:
        return self.registry.render()


_default: Metrics | None = None


def default_metrics() -> Metrics:
    """The process-wide metrics, created on first use."""
    global _default
    if _default is None:
        _default = Metrics()
    return _default
