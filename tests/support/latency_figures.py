"""The arithmetic of bench/latency.py (no I/O): percentiles of measured edits, histogram
differences between two scrapes of the agent's /metrics, and a process's CPU time.

A scrape is what ``tests.support.agent.parse_metrics`` returns: {(name, labels): value}.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Samples = Mapping[tuple[str, frozenset[tuple[str, str]]], float]
Buckets = list[tuple[float, float]]  # cumulative: [(le, count)], +Inf last


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` by nearest rank (an observed value; NaN when empty)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def buckets(samples: Samples, name: str, **match: str) -> Buckets:
    """The cumulative buckets of histogram ``name``, summed over the label sets that include
    ``match`` (``le`` aside)."""
    want = set(match.items())
    out: dict[float, float] = {}
    for (n, labels), value in samples.items():
        if n != f"{name}_bucket" or not want <= labels:
            continue
        le = dict(labels)["le"]
        bound = math.inf if le == "+Inf" else float(le)
        out[bound] = out.get(bound, 0.0) + value
    return sorted(out.items())


def difference(before: Buckets, after: Buckets) -> Buckets:
    """What was observed between two scrapes (a histogram absent before counts from zero)."""
    earlier = dict(before)
    return [(le, count - earlier.get(le, 0.0)) for le, count in after]


def quantile(cumulative: Buckets, q: float) -> float:
    """The ``q`` quantile, linear within its bucket as Prometheus' histogram_quantile (the
    lowest bucket from 0); the highest finite bound when it falls in +Inf; NaN when empty."""
    total = cumulative[-1][1] if cumulative else 0.0
    if total <= 0:
        return math.nan
    rank, prev_le, prev_count = q * total, 0.0, 0.0
    for le, count in cumulative:
        if count >= rank:
            if math.isinf(le):
                return prev_le
            width = count - prev_count
            return prev_le + (le - prev_le) * ((rank - prev_count) / width if width else 1.0)
        prev_le, prev_count = le, count
    return prev_le


def most(cumulative: Buckets) -> float:
    """An upper bound of the largest observation: the bound of the lowest bucket holding every
    observation (+Inf when some lie beyond the last bound; NaN when empty)."""
    total = cumulative[-1][1] if cumulative else 0.0
    if total <= 0:
        return math.nan
    return next(le for le, count in cumulative if count >= total)


@dataclass(frozen=True)
class Stage:
    """One histogram's observations between two scrapes."""

    name: str
    count: float
    p50: float
    p99: float
    max_bound: float

    def line(self) -> str:
        if not self.count:
            return f"{self.name}: no observations"
        bound = "beyond the last bucket" if math.isinf(self.max_bound) else f"{self.max_bound:g}s"
        return (
            f"{self.name}: p50 {self.p50:.3f}s, p99 {self.p99:.3f}s, max <= {bound} "
            f"({self.count:.0f} observations)"
        )


def stage(before: Samples, after: Samples, title: str, name: str, **match: str) -> Stage:
    """Histogram ``name`` (labels including ``match``) between two scrapes, as a :class:`Stage`."""
    seen = difference(buckets(before, name, **match), buckets(after, name, **match))
    count = seen[-1][1] if seen else 0.0
    return Stage(title, count, quantile(seen, 0.5), quantile(seen, 0.99), most(seen))


def cpu_seconds(stat: str, *, ticks: int) -> float:
    """User + system CPU time from a ``/proc/PID/stat`` line (``ticks``: SC_CLK_TCK)."""
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat[stat.rindex(")") + 2 :].split()
    # Fields 14 and 15 of the line (utime, stime) are 12 and 13 after the name and state.
    return (int(fields[11]) + int(fields[12])) / ticks
