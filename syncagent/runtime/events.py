"""Kubernetes Events (core/v1, what ``kubectl get events`` and ``kubectl describe`` show).

A repeated event (same object, type, reason and message) is aggregated into the Event already
written: its ``count`` goes up and ``lastTimestamp`` moves, as client-go's recorder does.
:meth:`EventRecorder.record` queues without blocking; :meth:`EventRecorder.run` emits, after the
work reconciles wait for (docs/lifecycle.md §4).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc
from httpx2 import AsyncClient

from syncagent.rest.request import MERGE_PATCH, build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call, status_code
from syncagent.runtime.fencing import NotLeader
from syncagent.runtime.metrics import Metrics, Registry, default_metrics

log = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"
MAX_MESSAGE = 1024  # the API server's limit for event notes
EVENT = Resource.of("v1", "Event", "events")
# While reconciles wait for a worker, queued Events wait: at most this long (seconds), looking
# again this often.
MAX_DEFER = 30.0
DEFER_POLL = 0.2


class EventMetrics:
    """The Kubernetes Events the agent emits."""

    def __init__(self, r: Registry) -> None:
        self.events = r.counter(
            "syncagent_events_total",
            "Kubernetes Events emitted by type, reason and outcome (created, aggregated, error, "
            "not_leader).",
            ("type", "reason", "outcome"),
        )


@dataclass(frozen=True)
class ObjectRef:
    """The object an Event is about."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str = ""

    @classmethod
    def of(cls, obj: Mapping[str, Any] | Any) -> ObjectRef:
        """From a raw dict or a lightkube object."""
        if isinstance(obj, Mapping):
            meta = obj.get("metadata") or {}
            get = meta.get
            api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        else:
            meta = obj.metadata
            api_version, kind = obj.apiVersion, obj.kind

            def get(attr: str) -> Any:
                return getattr(meta, attr, None)

        return cls(api_version, kind, get("namespace") or "", get("name") or "", get("uid") or "")

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Event:
    ref: ObjectRef
    type: str
    reason: str
    message: str
    # Machine-readable details for tools that read the Event back (metadata.annotations).
    annotations: tuple[tuple[str, str], ...] = ()


def timestamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def event_body(
    event: Event, *, name: str, component: str, instance: str, now: float
) -> dict[str, Any]:
    ref = event.ref
    involved = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
    if ref.namespace:
        involved["namespace"] = ref.namespace
    if ref.uid:
        involved["uid"] = ref.uid
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name,
            "namespace": ref.namespace or "default",
            **({"annotations": dict(event.annotations)} if event.annotations else {}),
        },
        "involvedObject": involved,
        "type": event.type,
        "reason": event.reason,
        "message": event.message[:MAX_MESSAGE],
        "count": 1,
        "firstTimestamp": timestamp(now),
        "lastTimestamp": timestamp(now),
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": instance,
    }


class EventRecorder:
    def __init__(
        self,
        client: AsyncClient,
        *,
        component: str = "syncagent",
        instance: str = "",
        metrics: Metrics | None = None,
        clock: Any = time.time,
        max_aggregated: int = 4096,
        max_queued: int = 10_000,
        writers: int = 4,
        busy: Callable[[], bool] = lambda: False,
        max_defer: float = MAX_DEFER,
    ) -> None:
        """``writers``: Events written at once. One at a time, a first convergence of 1,000
        graphs (an Event per created object) queued thousands and dropped the rest.
        ``busy``: whether reconciles wait for a worker; queued Events then wait, up to
        ``max_defer`` seconds or until half of ``max_queued`` are queued."""
        self._client = client
        self.component = component
        self.instance = instance or component
        self._metrics = metrics or default_metrics()
        self._clock = clock
        self._seen: OrderedDict[Event, tuple[str, int]] = OrderedDict()
        self._max_aggregated = max_aggregated
        self._pending: deque[tuple[Event, float]] = deque()  # and when it was queued
        self._max_queued = max_queued
        self._wakeup: anyio.Event | None = None
        self._writers = anyio.Semaphore(max(1, writers))
        self._in_flight: set[Event] = set()
        self._held: list[Event] = []  # repeats of an Event being written: aggregated after it
        self._busy = busy
        self._max_defer = max_defer

    def __len__(self) -> int:
        """Events remembered for aggregation."""
        return len(self._seen)

    def record(
        self,
        obj: ObjectRef,
        *,
        type: str,
        reason: str,
        message: str,
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        """Queue an event; :meth:`run` emits it. Never blocks, never raises."""
        if len(self._pending) >= self._max_queued:
            log.warning("event dropped: queue full", extra={"object": str(obj), "reason": reason})
            return
        notes = tuple(sorted((annotations or {}).items()))
        self._pending.append((Event(obj, type, reason, message, notes), time.monotonic()))
        if self._wakeup is not None:
            self._wakeup.set()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Emit queued events until cancelled, ``writers`` at a time, while reconciles do not
        wait for a worker. A repeat of an Event being written waits for it, so it is aggregated
        into that Event, not written twice."""
        task_status.started()
        async with anyio.create_task_group() as tg:
            while True:
                while self._pending and not self._deferred():
                    # A writer first: an Event stays queued while it waits for one, so a flush
                    # at shutdown still finds it.
                    await self._writers.acquire()
                    if not self._pending:  # a flush took them meanwhile
                        self._writers.release()
                        break
                    event, _ = self._pending.popleft()
                    if event in self._in_flight:
                        self._held.append(event)
                        self._writers.release()
                        continue
                    self._in_flight.add(event)
                    tg.start_soon(self._emit_one, event)
                self._wakeup = anyio.Event()
                if not self._pending:
                    await self._wakeup.wait()
                else:
                    with anyio.move_on_after(DEFER_POLL):
                        await self._wakeup.wait()

    def _deferred(self) -> bool:
        """Whether the oldest queued Event waits for the reconciles waiting for a worker."""
        queued_at = self._pending[0][1]
        return (
            len(self._pending) < self._max_queued // 2
            and time.monotonic() - queued_at < self._max_defer
            and self._busy()
        )

    async def _emit_one(self, event: Event) -> None:
        try:
            await self.emit(event)
        finally:
            self._in_flight.discard(event)
            self._writers.release()
            held = [e for e in self._held if e == event]
            if held:
                self._held = [e for e in self._held if e != event]
                # They waited behind their Event already: first in line, not held again.
                self._pending.extendleft((e, 0.0) for e in reversed(held))
                if self._wakeup is not None:
                    self._wakeup.set()

    async def flush(self) -> None:
        """Emit everything queued now (for shutdown)."""
        self._pending.extend((e, 0.0) for e in self._held)
        self._held.clear()
        while self._pending:
            await self.emit(self._pending.popleft()[0])

    async def emit_now(self, obj: ObjectRef, *, type: str, reason: str, message: str) -> str:
        """Write an event now, skipping the queue; returns the Event's name ("" on error)."""
        return await self.emit(Event(obj, type, reason, message))

    async def emit(self, event: Event) -> str:
        """Write ``event`` now; returns the Event's name. Errors are logged, not raised."""
        try:
            name, outcome = await self._write(event)
        except NotLeader as err:
            # Not leading (any more): the leader's reconciles report what they find.
            self._metrics.of(EventMetrics).events.inc(
                type=event.type, reason=event.reason, outcome="not_leader"
            )
            log.info(
                "event not written: not leading",
                extra={"object": str(event.ref), "reason": event.reason, "error": str(err)},
            )
            return ""
        except Exception as err:
            self._metrics.of(EventMetrics).events.inc(
                type=event.type, reason=event.reason, outcome="error"
            )
            log.warning(
                "event not written",
                extra={"object": str(event.ref), "reason": event.reason, "error": str(err)},
            )
            return ""
        self._metrics.of(EventMetrics).events.inc(
            type=event.type, reason=event.reason, outcome=outcome
        )
        return name

    async def _write(self, event: Event) -> tuple[str, str]:
        now = self._clock()
        seen = self._seen.get(event)
        if seen is not None:
            name, count = seen
            try:
                await self._aggregate(event, name, count + 1, now)
            except Exception as err:
                if status_code(err) != 404:
                    raise
                # The Event expired (TTL) or was deleted: start a new one.
            else:
                self._remember(event, name, count + 1)
                return name, "aggregated"
        name = f"{event.ref.name}.{time.time_ns():x}"
        body = event_body(
            event, name=name, component=self.component, instance=self.instance, now=now
        )
        namespace = body["metadata"]["namespace"]
        await call(self._client, build(EVENT, "create", namespace=namespace, body=body))
        self._remember(event, name, 1)
        return name, "created"

    async def _aggregate(self, event: Event, name: str, count: int, now: float) -> None:
        namespace = event.ref.namespace or "default"
        patch = {"count": count, "lastTimestamp": timestamp(now)}
        request = build(
            EVENT, "patch", namespace=namespace, name=name, body=patch, content_type=MERGE_PATCH
        )
        await call(self._client, request)

    def _remember(self, event: Event, name: str, count: int) -> None:
        self._seen[event] = (name, count)
        self._seen.move_to_end(event)
        while len(self._seen) > self._max_aggregated:
            self._seen.popitem(last=False)
