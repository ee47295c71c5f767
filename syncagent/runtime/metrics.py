"""The agent's metrics registry on ``prometheus_client``: a :class:`Registry` per process (or
per test) of counters, gauges and histograms, rendered in text format 0.0.4. The families
themselves are declared beside what they measure (:class:`Metrics`).

The wrappers keep the agent's calling style (labels as keywords, ``inc(amount, **labels)``)
and add what the agent and its tests read back (``value``, ``total``, ``count``); storage,
escaping and exposition are prometheus_client's. ``collectors`` run before each render: gauges
of what is measured at scrape time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import prometheus_client
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

# The agent exposes the series it always has; a `_created` series per counter and histogram
# would double /metrics for nothing its dashboards read.
prometheus_client.disable_created_metrics()

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
T = TypeVar("T")

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
    """One process's (or one test's) metrics: a :class:`Registry` and the families declared on it.

    No metric is named here: each concern declares its families beside the code that measures
    them, as a class whose constructor takes the registry (``WorkQueue``'s in ``queue.py``, the
    applies' in ``programs/writemetrics.py``); :meth:`of` makes each declaration once per
    registry, and the composition root asks for every one at start, so ``/metrics`` lists each
    family before its first sample.
    """

    def __init__(self, registry: Registry | None = None) -> None:
        self.registry = registry or Registry()
        self._declared: dict[Callable[[Registry], Any], Any] = {}

    def of(self, declaration: Callable[[Registry], T]) -> T:
        """The families of ``declaration`` (a class taking the registry) on this registry,
        declared at the first ask."""
        if declaration not in self._declared:
            self._declared[declaration] = declaration(self.registry)
        found: T = self._declared[declaration]
        return found

    def render(self) -> str:
        return self.registry.render()


_default: Metrics | None = None


def default_metrics() -> Metrics:
    """The process-wide metrics, created on first use."""
    global _default
    if _default is None:
        _default = Metrics()
    return _default
