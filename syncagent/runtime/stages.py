"""Where the time of a change goes (issue 31): queue wait, the coalescing window, and each
reconcile's requests and the work between them, as histograms.

A reconcile runs in a task of its own (``workers.py``); :func:`timing` gives that task a
:class:`ReconcileClock` through a context variable, and :class:`TimedTransport` (below every
request of the agent's HTTP client) times each request made inside it: a GET is ``read``, a write
to a ``/status`` subresource ``status_write``, any other write ``write``. What is left of the
reconcile, the time with no request in flight, is ``render``: routing, validation, rendering,
comparisons, and waiting for the event loop. Requests outside a reconcile (watches, Events,
Leases, discovery) are not timed here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx2

from syncagent.rest.request import addressed

if TYPE_CHECKING:
    from syncagent.runtime.metrics import Histogram, Registry

# From a millisecond (a converged reconcile's render) to minutes (a backlog).
BUCKETS = (
    *(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75),
    *(1.0, 1.1, 1.5, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
)
STAGES = ("render", "read", "write", "status_write")


class StageMetrics:
    """The histograms of this module and of the work queue, on ``r``."""

    def __init__(self, r: Registry) -> None:
        self.queue_wait = r.histogram(
            "syncagent_workqueue_queue_duration_seconds",
            "From a key's add to a work queue until a worker takes it.",
            ("queue",),
            buckets=BUCKETS,
        )
        self.coalesce = r.histogram(
            "syncagent_workqueue_coalesce_seconds",
            "From a change that re-queues a key within a coalescing window (a graph's child "
            "changed) until the key is queued.",
            ("queue",),
            buckets=BUCKETS,
        )
        self.reconcile = r.histogram(
            "syncagent_reconcile_stage_seconds",
            "Reconciles by controller and stage: each request of a reconcile (read: a GET; "
            "status_write: a write of a status subresource; write: any other write), and per "
            "reconcile its time without a request in flight (render).",
            ("controller", "stage"),
            buckets=BUCKETS,
        )
        self.watch_delay = r.histogram(
            "syncagent_graph_watch_delay_seconds",
            "From a graph's last write (its newest managedFields time, whole seconds: up to 1 s "
            "more than the delay) to its watch event at a new generation reaching the agent.",
            buckets=BUCKETS,
        )


@dataclass
class ReconcileClock:
    """One reconcile's time: requests by stage, and the time with none in flight."""

    controller: str
    histogram: Histogram
    clock: Callable[[], float] = time.perf_counter
    started: float = field(init=False)
    busy: float = 0.0  # seconds with at least one request in flight
    _in_flight: int = 0
    _since: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()

    def request_started(self) -> float:
        now = self.clock()
        if self._in_flight == 0:
            self._since = now
        self._in_flight += 1
        return now

    def request_done(self, started: float, stage: str) -> None:
        now = self.clock()
        self._in_flight -= 1
        if self._in_flight == 0:
            self.busy += now - self._since
        self.histogram.observe(now - started, controller=self.controller, stage=stage)

    def finish(self) -> None:
        """Observe the reconcile's time without a request in flight."""
        render = max(0.0, self.clock() - self.started - self.busy)
        self.histogram.observe(render, controller=self.controller, stage="render")


CURRENT: ContextVar[ReconcileClock | None] = ContextVar("syncagent_reconcile", default=None)


def request_stage(method: str, path: str) -> str:
    if method.upper() == "GET":
        return "read"
    return "status_write" if addressed(path).subresource == "status" else "write"


class TimedTransport(httpx2.AsyncBaseTransport):
    """Times each request made inside a reconcile (until its response headers arrive, retries
    included when it wraps the retrying transport)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        reconcile = CURRENT.get()
        if reconcile is None:
            return await self._inner.handle_async_request(request)
        started = reconcile.request_started()
        try:
            return await self._inner.handle_async_request(request)
        finally:
            reconcile.request_done(started, request_stage(request.method, request.url.path))

    async def aclose(self) -> None:
        await self._inner.aclose()


def install(http: httpx2.AsyncClient) -> None:
    """Time the requests of ``http`` (its default transport and any proxy mounts)."""
    http._transport = TimedTransport(http._transport)
    http._mounts = {
        pattern: None if transport is None else TimedTransport(transport)
        for pattern, transport in http._mounts.items()
    }
