"""Time from a graph change to the status write that answers it (issue 16 item 4).

The clock starts when the watch delivers a graph at a generation not seen before (a new graph,
or a spec change) whose status has not observed it, and stops at the first status write of that
graph at that generation or a later one. Queue wait, the reconcile and the write are all
inside; a graph that never gets a status write (deleted first) is forgotten with it.

The watch's own delay, from the graph's last write (its newest ``managedFields`` time: whole
seconds, on the API server's clock) to the event's arrival, is measured apart (runtime/stages.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from syncagent.runtime.cache import Change, ChangeType, object_key
from syncagent.runtime.metrics import Histogram, Registry


class LatencyMetrics:
    """From a graph's change to its status."""

    def __init__(self, r: Registry) -> None:
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


def _generation(obj: Mapping[str, Any] | None) -> int:
    return int(((obj or {}).get("metadata") or {}).get("generation") or 0)


def _observed(obj: Mapping[str, Any] | None) -> int:
    status = (obj or {}).get("status") or {}
    return int(status.get("observedGeneration") or 0) if isinstance(status, dict) else 0


def last_write(obj: Mapping[str, Any] | None) -> float | None:
    """The newest ``managedFields`` time of ``obj`` (seconds since the epoch), if any."""
    entries = ((obj or {}).get("metadata") or {}).get("managedFields") or ()
    times = []
    for entry in entries:
        stamp = entry.get("time") if isinstance(entry, dict) else None
        try:
            times.append(datetime.fromisoformat(str(stamp)).timestamp())
        except ValueError:
            continue  # no time, or not RFC 3339: nothing to measure from
    return max(times, default=None)


class ChangeLatency:
    """Pending changes by graph key: (generation, when seen)."""

    def __init__(
        self,
        histogram: Histogram,
        *,
        delay: Histogram | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.histogram = histogram
        self.delay = delay  # the watch's delay (runtime/stages.py), None: not measured
        self.clock = clock
        self.wall = wall
        self._pending: dict[str, tuple[int, float]] = {}
        self._seen: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._pending) + len(self._seen)

    def handle(self, change: Change[Any]) -> None:
        """A graphs-cache handler: start the clock for a generation not seen before."""
        key = object_key(change.namespace, change.name)
        if change.type is ChangeType.DELETED:
            self._pending.pop(key, None)
            self._seen.pop(key, None)
            return
        generation = _generation(change.new)
        if generation > self._seen.get(key, 0):
            self._seen[key] = generation
            if _observed(change.new) >= generation:
                # Answered already (a restarted agent lists converged graphs): no clock, or the
                # graph's next change would be timed from the restart.
                self._pending.pop(key, None)
            else:
                self._pending.setdefault(key, (generation, self.clock()))
                if change.old is not None:
                    # A change of a graph the cache held (not the agent's first listing, which
                    # would time how long ago the graph was written).
                    self._observe_delay(change.new)

    def _observe_delay(self, obj: Mapping[str, Any] | None) -> None:
        written = last_write(obj)
        if self.delay is not None and written is not None:
            self.delay.observe(max(0.0, self.wall() - written))

    def written(self, key: str, generation: int) -> None:
        """A status write for ``key`` made at ``generation``: stop the clock it answers."""
        pending = self._pending.get(key)
        if pending is None or generation < pending[0]:
            return
        del self._pending[key]
        self.histogram.observe(self.clock() - pending[1])
