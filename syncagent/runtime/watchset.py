"""The agent's watches: one informer per registered target, running only while its API is
served (docs/discovery.md). Caches outlive their informers, so reconcilers keep one reference.

A watch that has not synced (its list is denied, not found or failing) is a stuck *scope*: its
namespace (every namespace for a cluster-wide watch). :meth:`WatchSet.blocking` tells which
stuck watches cover a namespace, so work there waits while the rest goes on (docs/runtime.md
§3); ``syncagent_watch_unsynced`` is 1 for each running watch not synced yet.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
from httpx2 import AsyncClient

from syncagent.runtime.cache import Cache, Handler, Obj, identity
from syncagent.runtime.discovery import Discovery, Snapshot
from syncagent.runtime.metrics import Metrics, Registry, default_metrics
from syncagent.runtime.watch import Informer, WatchTarget

log = logging.getLogger(__name__)


class WatchSetMetrics:
    """Watches that run without a full list."""

    def __init__(self, r: Registry) -> None:
        self.watch_unsynced = r.gauge(
            "syncagent_watch_unsynced",
            "1 while a running watch has not listed in full (its list is denied, not found or "
            "failing): the graphs of its namespace wait for it.",
            ("watch",),
        )


@dataclass
class _Entry:
    target: WatchTarget
    cache: Cache[Any]
    scope: anyio.CancelScope | None = None


class WatchSet:
    """Starts and stops informers as discovery finds their APIs served or gone."""

    def __init__(
        self,
        client: AsyncClient,
        *,
        optional: Iterable[tuple[str, str]] = (),
        metrics: Metrics | None = None,
        on_not_found: Callable[[], None] | None = None,
        watch_timeout: float | None = None,
    ) -> None:
        self._client = client
        # Optional (group, version)s (those discovery looks at) are watched only while discovery
        # finds them served; everything else, our own nvidia.com/v1beta1 kinds included, is
        # always watched. By version, because nvidia.com/v1alpha1 checkpoints are optional.
        self._optional = frozenset(optional)
        self._metrics = metrics or default_metrics()
        self._on_not_found = on_not_found
        self._watch_timeout = watch_timeout
        self._entries: list[_Entry] = []
        self._tg: anyio.abc.TaskGroup | None = None
        self._caps: Snapshot | None = None
        self._sync_listeners: list[Callable[[], None]] = []

    def add(
        self,
        target: WatchTarget,
        *,
        transform: Callable[[Obj], Any] = identity,
        handlers: Iterable[Handler[Any]] = (),
    ) -> Cache[Any]:
        """Register a watch; returns its cache. Call before :meth:`run`."""
        cache: Cache[Any] = Cache(str(target), transform=transform)
        for handler in handlers:
            cache.add_handler(handler)
        entry = _Entry(target, cache)
        cache.add_sync_listener(lambda: self._synced_one(entry))
        self._entries.append(entry)
        return cache

    def add_sync_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever one of the watches has synced (listed in full)."""
        self._sync_listeners.append(listener)

    def _synced_one(self, entry: _Entry) -> None:
        self._metrics.of(WatchSetMetrics).watch_unsynced.set(0, watch=str(entry.target))
        for listener in list(self._sync_listeners):
            listener()

    def caches(self) -> list[Cache[Any]]:
        return [e.cache for e in self._entries]

    def is_optional(self, target: WatchTarget) -> bool:
        return (target.resource.group, target.resource.version) in self._optional

    def running(self) -> list[WatchTarget]:
        return [e.target for e in self._entries if e.scope is not None]

    @property
    def synced(self) -> bool:
        """Every running watch has listed once (watches of unserved APIs do not count)."""
        return self._tg is not None and all(
            e.cache.synced for e in self._entries if e.scope is not None
        )

    def unsynced(self) -> list[WatchTarget]:
        """The running watches that have not listed yet: the stuck scopes."""
        return [e.target for e in self._entries if e.scope is not None and not e.cache.synced]

    def blocking(
        self, namespace: str, resources: Collection[str] | None = None
    ) -> list[WatchTarget]:
        """The unsynced watches of ``namespace`` or of every namespace (of ``resources`` only,
        when given): work in ``namespace`` would read caches they have not filled."""
        return [
            t
            for t in self.unsynced()
            if (not t.namespace or t.namespace == namespace)
            and (resources is None or t.resource.plural in resources)
        ]

    def stuck(self) -> str:
        """What readiness says while a watch has not synced ("" once every one has)."""
        if self._tg is None:
            return "watches not started"
        waiting = self.unsynced()
        return ", ".join(str(t) for t in waiting) + " not synced" if waiting else ""

    async def wait_synced(self) -> None:
        while not self.synced:
            for entry in self._entries:
                if entry.scope is not None:
                    await entry.cache.wait_synced()
            if self._tg is None:
                await anyio.sleep(0.05)

    def update(self, capabilities: Snapshot | None) -> None:
        """Start the watches whose API is now served, stop those whose API is gone."""
        self._caps = capabilities
        if self._tg is None:
            return
        for entry in self._entries:
            served = not self.is_optional(entry.target) or (
                capabilities is not None and capabilities.serves(entry.target.resource)
            )
            if served and entry.scope is None:
                entry.scope = anyio.CancelScope()
                unsynced = 0 if entry.cache.synced else 1
                self._metrics.of(WatchSetMetrics).watch_unsynced.set(
                    unsynced, watch=str(entry.target)
                )
                self._tg.start_soon(self._run_one, entry, name=f"watch {entry.target}")
                log.info("watch started", extra={"resource": str(entry.target)})
            elif not served and entry.scope is not None:
                entry.scope.cancel()
                entry.scope = None
                entry.cache.clear()
                self._metrics.of(WatchSetMetrics).watch_unsynced.set(0, watch=str(entry.target))
                log.info("watch stopped: API not served", extra={"resource": str(entry.target)})

    async def run(
        self,
        discovery: Discovery[Any] | None = None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run the watches until cancelled; follow ``discovery`` when given."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                if discovery is not None:
                    discovery.add_listener(lambda _old, new: self.update(new))
                    self.update(discovery.capabilities)
                else:
                    self.update(self._caps)
                task_status.started()
                await anyio.sleep_forever()
            finally:
                self._tg = None

    async def _run_one(self, entry: _Entry) -> None:
        scope = entry.scope
        assert scope is not None
        with scope:
            informer = Informer(
                self._client,
                entry.target,
                cache=entry.cache,
                metrics=self._metrics,
                on_not_found=self._on_not_found,
                watch_timeout=self._watch_timeout,
            )
            await informer.run()
