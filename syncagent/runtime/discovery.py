"""Discovery of optional API groups at start and on a timer (docs/routing.md §1).

Generic: the caller names the group/versions to look at and how to turn what is served into its
snapshot (``resolve``; the agent's is :func:`syncagent.programs.capabilities.resolver`). A
discovery error is not absence: the last successful snapshot stays. Before the first success
:attr:`Discovery.capabilities` is ``None`` and nothing should be reconciled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import anyio
import anyio.abc
from httpx2 import AsyncClient

from syncagent.rest.request import discovery
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call_or_none
from syncagent.runtime.metrics import Metrics, Registry, default_metrics

log = logging.getLogger(__name__)
_MIN_GAP = 1.0  # seconds between refreshes that requests asked for


class CapabilityMetrics:
    """Which capabilities discovery found on."""

    def __init__(self, r: Registry) -> None:
        self.capabilities = r.gauge("syncagent_capability", "1 when a capability is on.", ("name",))


class Snapshot(Protocol):
    """What discovery keeps: which resources are served, and named flags for the metrics."""

    def serves(self, resource: Resource) -> bool: ...

    def as_dict(self) -> Mapping[str, bool]: ...


S = TypeVar("S", bound=Snapshot)
# (served resources, strict) -> snapshot; ``strict`` is True at start (it may refuse to start).
Resolve = Callable[[frozenset[Resource], bool], S]
Listener = Callable[[S | None, S], None]


@dataclass(frozen=True)
class Served:
    """The plainest snapshot: what is served, no named flags."""

    served: frozenset[Resource] = frozenset()

    def serves(self, resource: Resource) -> bool:
        return resource in self.served

    def as_dict(self) -> Mapping[str, bool]:
        return {}


def served_only(served: frozenset[Resource], _strict: bool) -> Served:
    return Served(served)


class DiscoveryError(Exception):
    """Discovery could not tell what is served (transport error, 5xx, timeout)."""


async def served_resources(
    client: AsyncClient,
    group_versions: Iterable[tuple[str, str]],
    *,
    request_timeout: float = 10.0,
) -> frozenset[Resource]:
    """The resources (no subresources) served under ``group_versions``; 404 = not served."""
    served: set[Resource] = set()
    for group, version in group_versions:
        api_version = f"{group}/{version}" if group else version
        try:
            doc = await call_or_none(
                client, discovery(api_version), request_timeout=request_timeout
            )
        except Exception as err:
            raise DiscoveryError(f"discovery of {group}/{version} failed: {err}") from err
        for res in (doc or {}).get("resources") or ():
            name = res.get("name", "")
            if name and "/" not in name:
                namespaced = bool(res.get("namespaced"))
                served.add(Resource(group, version, res.get("kind", ""), name, namespaced))
    return frozenset(served)


class Discovery(Generic[S]):
    """Keeps a snapshot of what is served fresh and tells listeners when it changes."""

    def __init__(
        self,
        client: AsyncClient,
        *,
        resolve: Resolve[S],
        group_versions: Iterable[tuple[str, str]],
        interval: float = 60.0,
        timeout: float = 10.0,
        metrics: Metrics | None = None,
    ) -> None:
        self._client = client
        self._resolve = resolve
        self._group_versions = tuple(group_versions)
        self._interval = interval
        self._timeout = timeout
        self._metrics = metrics or default_metrics()
        self._listeners: list[Listener[S]] = []
        self._current: S | None = None
        self._ready: anyio.Event | None = None
        self._refresh_now: anyio.Event | None = None

    @property
    def capabilities(self) -> S | None:
        """The last successful snapshot; ``None`` before the first success."""
        return self._current

    def add_listener(self, listener: Listener[S]) -> None:
        """Call ``listener(old, new)`` after every change (and after the first success)."""
        self._listeners.append(listener)

    def request_refresh(self) -> None:
        """Refresh now, e.g. after a request failed with "no matches for kind"."""
        if self._refresh_now is not None:
            self._refresh_now.set()

    async def wait_ready(self) -> S:
        while self._current is None:
            if self._ready is None:
                self._ready = anyio.Event()
            await self._ready.wait()
        return self._current

    async def refresh(self, *, strict: bool = False) -> S:
        """Discover once. Raises :class:`DiscoveryError` (snapshot kept) or, with ``strict``,
        whatever ``resolve`` raises (the agent's refuses a required capability not served)."""
        served = await served_resources(
            self._client, self._group_versions, request_timeout=self._timeout
        )
        new = self._resolve(served, strict)
        old, self._current = self._current, new
        if old != new:
            self._publish(old, new)
        return new

    async def start(self) -> S:
        """The first discovery: strict about required capabilities, errors propagate."""
        return await self.refresh(strict=True)

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Refresh every ``interval`` seconds (or on :meth:`request_refresh`) until cancelled.

        Call :meth:`start` first when the agent must refuse to start without a capability.
        """
        task_status.started()
        due = self._current is None  # start() already discovered once
        while True:
            last = anyio.current_time()
            if due:
                try:
                    await self.refresh()
                except DiscoveryError as err:
                    log.warning(
                        "discovery failed; keeping the last result", extra={"error": str(err)}
                    )
            due = True
            self._refresh_now = anyio.Event()
            # Until the first success nothing is reconciled, so retry sooner.
            delay = self._interval if self._current is not None else min(self._interval, 5.0)
            with anyio.move_on_after(delay):
                await self._refresh_now.wait()
                # Many requests may fail at once: one refresh per _MIN_GAP at most.
                await anyio.sleep(max(0.0, last + _MIN_GAP - anyio.current_time()))

    def _publish(self, old: S | None, new: S) -> None:
        for name, on in new.as_dict().items():
            self._metrics.of(CapabilityMetrics).capabilities.set(1 if on else 0, name=name)
        if self._ready is not None:
            self._ready.set()
        log.info("capabilities changed", extra={"capabilities": new.as_dict()})
        for listener in list(self._listeners):
            listener(old, new)
