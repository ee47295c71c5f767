"""Minimal Prometheus metrics: counters, gauges, histograms and the text exposition format.

Only what the agent needs (no client library dependency): label sets are tuples of strings in
the order the metric declares, values are floats, rendering follows text format 0.0.4.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from syncagent.runtime import process
from syncagent.runtime.stages import StageMetrics

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

DEFAULT_BUCKETS: tuple[float, ...] = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def escape_label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_labels(names: Sequence[str], values: Sequence[str]) -> str:
    if not names:
        return ""
    pairs = ",".join(f'{n}="{escape_label_value(v)}"' for n, v in zip(names, values, strict=True))
    return "{" + pairs + "}"


@dataclass
class _Metric:
    name: str
    help: str
    labelnames: tuple[str, ...] = ()
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    kind = "untyped"

    def _key(self, labels: dict[str, str]) -> tuple[str, ...]:
        if set(labels) != set(self.labelnames):
            raise ValueError(
                f"metric {self.name}: labels {sorted(labels)} do not match "
                f"declared {list(self.labelnames)}"
            )
        return tuple(str(labels[n]) for n in self.labelnames)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {escape_help(self.help)}", f"# TYPE {self.name} {self.kind}"]

    def samples(self) -> Iterator[str]:
        raise NotImplementedError


@dataclass
class Counter(_Metric):
    _values: dict[tuple[str, ...], float] = field(default_factory=dict, repr=False)

    kind = "counter"

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        if amount < 0:
            raise ValueError(f"counter {self.name}: cannot decrease by {amount}")
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        return self._values.get(self._key(labels), 0.0)

    def total(self, **match: str) -> float:
        """Sum over every label set whose labels include ``match``."""
        idx = {self.labelnames.index(k): v for k, v in match.items()}
        with self._lock:
            items = list(self._values.items())
        return sum(v for key, v in items if all(key[i] == want for i, want in idx.items()))

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = sorted(self._values.items())
        for key, value in items:
            yield f"{self.name}{format_labels(self.labelnames, key)} {format_value(value)}"


@dataclass
class Gauge(Counter):
    kind = "gauge"

    def set(self, value: float, **labels: str) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = float(value)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def dec(self, amount: float = 1.0, **labels: str) -> None:
        self.inc(-amount, **labels)


@dataclass
class _HistogramState:
    buckets: list[int]
    sum: float = 0.0
    count: int = 0


@dataclass
class Histogram(_Metric):
    buckets: tuple[float, ...] = DEFAULT_BUCKETS
    _states: dict[tuple[str, ...], _HistogramState] = field(default_factory=dict, repr=False)

    kind = "histogram"

    def __post_init__(self) -> None:
        if list(self.buckets) != sorted(set(self.buckets)):
            raise ValueError(f"histogram {self.name}: buckets must be strictly increasing")
        if "le" in self.labelnames:
            raise ValueError(f"histogram {self.name}: 'le' is a reserved label")

    def observe(self, value: float, **labels: str) -> None:
        key = self._key(labels)
        with self._lock:
            state = self._states.get(key)
            if state is None:
                state = self._states[key] = _HistogramState([0] * len(self.buckets))
            # Buckets are cumulative when rendered; store per-bucket counts here.
            i = bisect_left(self.buckets, value)
            if i < len(self.buckets):
                state.buckets[i] += 1
            state.sum += value
            state.count += 1

    def count(self, **labels: str) -> int:
        state = self._states.get(self._key(labels))
        return state.count if state else 0

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = sorted(
                (k, _HistogramState(list(s.buckets), s.sum, s.count))
                for k, s in self._states.items()
            )
        names = (*self.labelnames, "le")
        for key, state in items:
            cumulative = 0
            for bound, n in zip(self.buckets, state.buckets, strict=True):
                cumulative += n
                labels = format_labels(names, (*key, format_value(bound)))
                yield f"{self.name}_bucket{labels} {cumulative}"
            yield f"{self.name}_bucket{format_labels(names, (*key, '+Inf'))} {state.count}"
            plain = format_labels(self.labelnames, key)
            yield f"{self.name}_sum{plain} {format_value(state.sum)}"
            yield f"{self.name}_count{plain} {state.count}"


class Registry:
    """A set of metrics rendered together on ``/metrics``; ``collectors`` run before each
    render (gauges of what is measured at scrape time)."""

    def __init__(self) -> None:
        self._metrics: dict[str, _Metric] = {}
        self.collectors: list[Callable[[], None]] = []

    def _add(self, metric: _Metric) -> _Metric:
        if metric.name in self._metrics:
            raise ValueError(f"metric {metric.name} is already registered")
        self._metrics[metric.name] = metric
        return metric

    def counter(self, name: str, help: str, labelnames: Sequence[str] = ()) -> Counter:
        metric = self._add(Counter(name, help, tuple(labelnames)))
        assert isinstance(metric, Counter)
        return metric

    def gauge(self, name: str, help: str, labelnames: Sequence[str] = ()) -> Gauge:
        metric = self._add(Gauge(name, help, tuple(labelnames)))
        assert isinstance(metric, Gauge)
        return metric

    def histogram(
        self,
        name: str,
        help: str,
        labelnames: Sequence[str] = (),
        *,
        buckets: Sequence[float] = DEFAULT_BUCKETS,
    ) -> Histogram:
        metric = self._add(Histogram(name, help, tuple(labelnames), buckets=tuple(buckets)))
        assert isinstance(metric, Histogram)
        return metric

    def render(self) -> str:
        for collect in self.collectors:
            collect()
        lines: list[str] = []
        for name in sorted(self._metrics):
            metric = self._metrics[name]
            lines.extend(metric.header())
            lines.extend(metric.samples())
        return "\n".join(lines) + "\n" if lines else ""


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
