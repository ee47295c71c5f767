"""A de-duplicated work queue of string keys with per-key serialisation and delayed adds.

Semantics (as client-go's workqueue):
- a key waiting in the queue is held once, however often it is added;
- a key handed out by :meth:`WorkQueue.get` is not handed out again until :meth:`done`; if it
  was added meanwhile it is queued again at ``done``, so the change is never lost;
- :meth:`add_after` delays a key, keeping the earliest due time when delayed twice;
- :meth:`add_soon` coalesces: a key already waiting stays as it is, else it is delayed;
- :meth:`add_rate_limited` delays by the key's backoff; :meth:`forget` resets it.

Create and use it inside an event loop; ``async with queue:`` runs the timer for delayed keys
(delayed keys wait while no timer runs). :meth:`shut_down` is final.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import deque
from types import TracebackType

import anyio
import anyio.abc

from syncagent.runtime.backoff import Backoff
from syncagent.runtime.metrics import Metrics, Registry, default_metrics
from syncagent.runtime.stages import StageMetrics


class QueueMetrics:
    """The work queues' keys: waiting, added, re-queued."""

    def __init__(self, r: Registry) -> None:
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


class QueueShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` once the queue is shut down."""


class WorkQueue:
    def __init__(
        self,
        name: str,
        *,
        backoff: Backoff | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.name = name
        self.backoff = backoff or Backoff()
        self._metrics = metrics or default_metrics()
        self._ready: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._delayed: dict[str, float] = {}
        # When a waiting key was added (queue wait), and when a key first waited for a
        # coalescing window (add_soon): runtime/stages.py's histograms.
        self._added: dict[str, float] = {}
        self._soon: dict[str, float] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._shutting_down = False
        self._wakeup: anyio.Event | None = None
        self._timer_wakeup: anyio.Event | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    # -- adding ---------------------------------------------------------------------------
    def add(self, key: str) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        self._metrics.of(QueueMetrics).queue_adds.inc(queue=self.name)
        now = time.monotonic()
        self._added[key] = now
        soon = self._soon.pop(key, None)
        if soon is not None:
            self._metrics.of(StageMetrics).coalesce.observe(now - soon, queue=self.name)
        if key in self._processing:
            return  # queued again by done()
        self._ready.append(key)
        self._changed()

    def add_after(self, key: str, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        due = anyio.current_time() + delay
        current = self._delayed.get(key)
        if current is not None and current <= due:
            return
        self._delayed[key] = due
        heapq.heappush(self._heap, (due, next(self._seq), key))
        self._wake(timer=True)

    def add_soon(self, key: str, window: float) -> None:
        """Add ``key`` within ``window`` seconds, coalescing: a key already waiting is left as it
        is (its reconcile reads the caches when it runs, so it sees this change too), and the
        changes of one window cost one reconcile."""
        if key not in self._dirty:
            self._soon.setdefault(key, time.monotonic())
            self.add_after(key, window)

    def add_rate_limited(self, key: str) -> float:
        """Delay ``key`` by its backoff; returns the delay chosen."""
        failures = self._failures.get(key, 0) + 1
        self._failures[key] = failures
        delay = self.backoff.delay(failures)
        self._metrics.of(QueueMetrics).queue_retries.inc(queue=self.name)
        self.add_after(key, delay)
        return delay

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)

    def failures(self, key: str) -> int:
        return self._failures.get(key, 0)

    # -- processing -----------------------------------------------------------------------
    async def get(self) -> str:
        """The next key to process; waits for one. Raises :class:`QueueShutDown`."""
        while True:
            if self._shutting_down:
                raise QueueShutDown(self.name)
            if self._ready:
                key = self._ready.popleft()
                self._dirty.discard(key)
                added = self._added.pop(key, None)
                if added is not None:
                    self._metrics.of(StageMetrics).queue_wait.observe(
                        time.monotonic() - added, queue=self.name
                    )
                self._processing.add(key)
                self._changed()
                return key
            if self._wakeup is None:
                self._wakeup = anyio.Event()
            await self._wakeup.wait()

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty and not self._shutting_down:
            self._ready.append(key)
            self._changed()

    def shut_down(self) -> None:
        """Stop handing out keys; keys being processed may still call :meth:`done`."""
        self._shutting_down = True
        self._ready.clear()
        self._dirty.clear()
        self._delayed.clear()
        self._heap.clear()
        self._added.clear()
        self._soon.clear()
        self._changed()
        self._wake(timer=True)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def __len__(self) -> int:
        return len(self._ready)

    def processing(self) -> frozenset[str]:
        return frozenset(self._processing)

    def pending(self) -> frozenset[str]:
        """Keys waiting now or delayed."""
        return frozenset(self._dirty) | frozenset(self._delayed)

    # -- timer for delayed keys -------------------------------------------------------------
    async def __aenter__(self) -> WorkQueue:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._run_timer)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        # Only the timer stops: a leader that lost its Lease may lead again with this queue.
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        tg, self._tg = self._tg, None
        return await tg.__aexit__(exc_type, exc, tb)

    async def _run_timer(self) -> None:
        while not self._shutting_down:
            now = anyio.current_time()
            while self._heap and self._heap[0][0] <= now:
                due, _, key = heapq.heappop(self._heap)
                if self._delayed.get(key) == due:
                    del self._delayed[key]
                    self.add(key)
            timeout = self._heap[0][0] - now if self._heap else None
            self._timer_wakeup = anyio.Event()
            with anyio.move_on_after(timeout):
                await self._timer_wakeup.wait()

    # -- internals --------------------------------------------------------------------------
    def _changed(self) -> None:
        self._metrics.of(QueueMetrics).queue_depth.set(len(self._ready), queue=self.name)
        self._wake(timer=False)

    def _wake(self, *, timer: bool) -> None:
        if timer:
            if self._timer_wakeup is not None:
                self._timer_wakeup.set()
            return
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None
