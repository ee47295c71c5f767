"""The run loop that composes the runtime: probes and metrics, discovery, watches, events,
leader election, workers and graceful shutdown.

Order of a run:
1. serve ``/metrics``, ``/healthz``, ``/readyz``; watch SIGTERM/SIGINT;
2. discover (a required capability that is missing stops the agent here);
3. start the watches of served APIs;
4. campaign for the Lease (every replica keeps warm caches; only the leader runs workers; a
   leader that loses the Lease stops its workers and campaigns again). A key waits (is held
   back) while a watch it reads (of its namespace, or a cluster-wide one) has not synced, and
   is queued again when a watch syncs: one watch that cannot list holds back only the keys of
   its namespace that read its resource;
5. on a signal: stop taking keys, let reconciles in flight finish within the grace period,
   write the queued Events (still leading: the fence refuses them after), release the Lease,
   stop everything else.

With a Lease, the elector's fence is installed on the client: no write of this process is
sent while it does not lead (``runtime/fencing.py``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
from httpx2 import AsyncClient

from syncagent.runtime import fencing, http
from syncagent.runtime.backoff import Backoff
from syncagent.runtime.cache import split_key
from syncagent.runtime.connections import Clients
from syncagent.runtime.discovery import Discovery, DiscoveryError, Resolve, Snapshot, served_only
from syncagent.runtime.events import EventRecorder
from syncagent.runtime.health import Health
from syncagent.runtime.leader import LeaderElector, LeadershipLost, LeaseConfig
from syncagent.runtime.metricfamilies import declare_runtime_metrics
from syncagent.runtime.metrics import Metrics, default_metrics
from syncagent.runtime.queue import WorkQueue
from syncagent.runtime.shutdown import Shutdown, watch_signals
from syncagent.runtime.watchset import WatchSet
from syncagent.runtime.workers import (
    DEFAULT_CONCURRENCY,
    Reconcile,
    Result,
    resync_every,
    run_workers,
)

log = logging.getLogger(__name__)


def sole_exception(group: BaseExceptionGroup) -> BaseException:
    """The one exception inside (nested) ``group``, or the group when there are several."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        exc = pending.pop()
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else group


@dataclass(frozen=True)
class ManagerOptions:
    metrics_address: str | None = "127.0.0.1:8080"
    # Served beside /metrics: the probes, when they have no port of their own (tests, laptops).
    metrics_probes: bool = True
    # HTTPS with TokenReview + SubjectAccessReview (runtime/metricsauth.py); cert_dir: tls.crt
    # and tls.key, followed as they change, self-signed while absent (runtime/servingcert.py).
    metrics_secure: bool = False
    metrics_cert_dir: str | None = None
    lease: LeaseConfig | None = None  # None: no leader election (a single replica)
    # What discovery looks at (optional group/versions) and how it turns that into a snapshot.
    group_versions: tuple[tuple[str, str], ...] = ()
    resolve: Resolve[Any] = served_only
    discovery_interval: float = 60.0
    shutdown_grace: float = 30.0
    watch_timeout: float | None = None
    handle_signals: bool = True


@dataclass
class _Controller:
    name: str
    reconcile: Reconcile
    queue: WorkQueue
    concurrency: int
    resync_period: float | None
    keys: Callable[[], Iterable[str]] | None
    # The resources a key's reconcile reads (None: every watched one): only their watches hold
    # the key back.
    needs: Callable[[str], Collection[str] | None] | None = None


class Manager:
    def __init__(
        self,
        client: AsyncClient,
        options: ManagerOptions,
        *,
        metrics: Metrics | None = None,
        instance: str = "",
        clients: Clients | None = None,
    ) -> None:
        """``clients``: a pool per kind of traffic (runtime/connections.py); without it,
        everything goes over ``client``."""
        self.client = client
        self.clients = clients or Clients.sharing(client)
        self.options = options
        self.metrics = metrics or default_metrics()
        declare_runtime_metrics(self.metrics)
        self.health = Health()
        self.shutdown = Shutdown()
        self.discovery: Discovery[Any] = Discovery(
            client,
            resolve=options.resolve,
            group_versions=options.group_versions,
            interval=options.discovery_interval,
            metrics=self.metrics,
        )
        self.watches = WatchSet(
            self.clients.watches,
            optional=options.group_versions,
            metrics=self.metrics,
            on_not_found=self.discovery.request_refresh,
            watch_timeout=options.watch_timeout,
        )
        identity = options.lease.identity if options.lease else ""
        # Events wait while reconciles wait for a worker (docs/lifecycle.md §4).
        self.events = EventRecorder(
            client,
            instance=instance or identity,
            metrics=self.metrics,
            busy=lambda: any(len(c.queue) for c in self._controllers),
        )
        self.elector = (
            LeaderElector(self.clients.lease, options.lease, metrics=self.metrics)
            if options.lease
            else None
        )
        if self.elector is not None:
            # The client every writer here uses; the elector's Lease requests are exempt.
            fencing.install(client, self.elector.fence)
        self.port: int | None = None
        self._controllers: list[_Controller] = []
        # Awaited each time this process starts leading, before any key is worked on.
        self.before_lead: list[Callable[[], Awaitable[None]]] = []
        self._held: dict[str, set[str]] = {}  # controller -> keys held back by unsynced watches
        self._logged_synced = False
        self.health.add_readiness("discovery", lambda: self.discovery.capabilities is not None)
        self.health.add_readiness("caches", lambda: self.watches.stuck())
        self.health.add_readiness(
            "leader-election", lambda: self.elector is None or self.elector.decided
        )
        self.health.add_readiness("running", lambda: not self.shutdown.requested)

    @property
    def capabilities(self) -> Any:
        """The discovery snapshot (``options.resolve``'s type); None before the first one."""
        return self.discovery.capabilities

    def add_controller(
        self,
        name: str,
        reconcile: Reconcile,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        resync_period: float | None = None,
        keys: Callable[[], Iterable[str]] | None = None,
        backoff: Backoff | None = None,
        requeue_on_capability_change: bool = False,
        needs: Callable[[str], Collection[str] | None] | None = None,
    ) -> WorkQueue:
        """Register a reconciler; returns its queue (wire cache handlers to ``queue.add``).

        ``keys`` lists every key to reconcile: all of them at the start of leadership, on each
        resync and, with ``requeue_on_capability_change``, after discovery sees a change.
        ``needs(key)``: the resources that key's reconcile reads (None: all of them); a watch
        of another resource that has not synced does not hold it back.
        """
        queue = WorkQueue(name, backoff=backoff, metrics=self.metrics)
        self._controllers.append(
            _Controller(name, reconcile, queue, concurrency, resync_period, keys, needs)
        )
        if requeue_on_capability_change and keys is not None:

            def requeue(old: Snapshot | None, _new: Snapshot) -> None:
                if old is not None:
                    for key in keys():
                        queue.add(key)

            self.discovery.add_listener(requeue)
        return queue

    # -- the run loop -------------------------------------------------------------------------
    async def run(self) -> None:
        """Run until a signal (or :attr:`shutdown`) stops it; see the module docstring.

        A single failure (a required capability missing, the metrics port taken) is raised as
        itself, not wrapped in an exception group, so the CLI can report it in one line.
        """
        try:
            await self._run()
        except BaseExceptionGroup as group:
            raise sole_exception(group) from None

    async def _run(self) -> None:
        async with anyio.create_task_group() as tg:
            if self.options.handle_signals:
                await tg.start(watch_signals, self.shutdown)
            if self.options.metrics_address is not None:
                self.port = await tg.start(self._serve_metrics, self.options.metrics_address)
            if await self._discover_first():
                self.watches.add_sync_listener(self._release_held)
                await tg.start(self.discovery.run)
                await tg.start(self.watches.run, self.discovery)
                await tg.start(self.events.run)
                await self._elect_and_lead()
            tg.cancel_scope.cancel()

    async def _serve_metrics(
        self, address: str, *, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        table = http.routes(metrics=self.metrics, health=self.health)
        if not self.options.metrics_probes:
            table = {"/metrics": table["/metrics"]}
        what = "metrics and probes" if self.options.metrics_probes else "metrics"
        if not self.options.metrics_secure:
            server = http.Server(address, table, what=what)
            await http.serve_endpoint(server, task_status=task_status)
            return
        # Only the secure mode needs cryptography's X.509 and the reviews.
        from syncagent.runtime import metricsauth, servingcert

        cert = servingcert.ServingCert(self.options.metrics_cert_dir)
        server = http.Server(
            address,
            table,
            what=what,
            tls=cert.context,
            authorize=metricsauth.ReviewAuthorizer(metricsauth.api_post(self.clients.reviews)),
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(cert.follow)
            await http.serve_endpoint(server, task_status=task_status)

    async def _discover_first(self) -> bool:
        """Discover until the first success; False if shutdown came first."""
        failures = 0
        while not self.shutdown.requested:
            try:
                await self.discovery.start()
                return True
            except DiscoveryError as err:
                failures += 1
                delay = Backoff(base=1.0, cap=30.0).delay(failures)
                log.warning(
                    "discovery failed; retrying", extra={"error": str(err), "retry_in": delay}
                )
                await self._until_shutdown(anyio.sleep(delay))
        return False

    async def _until_shutdown(self, awaitable: Awaitable[object]) -> bool:
        """Await ``awaitable`` unless shutdown comes first; True when it completed."""
        done = False
        async with anyio.create_task_group() as tg:

            async def body() -> None:
                nonlocal done
                await awaitable
                done = True
                tg.cancel_scope.cancel()

            tg.start_soon(body)
            await self.shutdown.wait()
            tg.cancel_scope.cancel()
        return done

    async def _elect_and_lead(self) -> None:
        if self.elector is None:
            await self._lead()
            return
        elector = self.elector
        async with anyio.create_task_group() as tg:

            async def campaign() -> None:
                # A lost Lease (say the API server was unreachable past the renew deadline)
                # cancels the work; campaign again rather than exit, so the agent recovers
                # without a restart.
                while not self.shutdown.requested:
                    try:
                        await elector.run(self._lead)
                    except LeadershipLost as err:
                        log.error("leadership lost; campaigning again", extra={"error": str(err)})
                tg.cancel_scope.cancel()

            tg.start_soon(campaign)
            await self.shutdown.wait()
            if not elector.is_leader:
                tg.cancel_scope.cancel()

    def _gated(self, c: _Controller) -> Reconcile:
        """``c``'s reconcile, holding back a key while a watch of its scope has not synced."""

        async def reconcile(key: str) -> Result | None:
            resources = c.needs(key) if c.needs is not None else None
            waiting = self.watches.blocking(split_key(key)[0], resources)
            if waiting:
                self._held.setdefault(c.name, set()).add(key)
                return Result(held=", ".join(str(t) for t in waiting))
            return await c.reconcile(key)

        return reconcile

    def _release_held(self) -> None:
        """A watch synced: queue the keys it may have held back (the gate looks again)."""
        if self.watches.synced and not self._logged_synced:
            self._logged_synced = True
            log.info("caches synced")
        for c in self._controllers:
            for key in self._held.pop(c.name, set()):
                c.queue.add(key)

    async def _lead(self) -> None:
        """Run every controller's workers until shutdown, then drain them within the grace."""
        for hook in self.before_lead:
            await hook()
        async with contextlib.AsyncExitStack() as stack:
            for c in self._controllers:
                await stack.enter_async_context(c.queue)
                for key in c.keys() if c.keys else ():
                    c.queue.add(key)
            async with anyio.create_task_group() as work:
                resyncs = anyio.CancelScope()
                for c in self._controllers:
                    work.start_soon(
                        lambda c=c: run_workers(
                            c.queue,
                            self._gated(c),
                            concurrency=c.concurrency,
                            controller=c.name,
                            metrics=self.metrics,
                        )
                    )
                work.start_soon(self._resyncs, resyncs)
                await self.shutdown.wait()
                resyncs.cancel()
                for c in self._controllers:
                    c.queue.shut_down()
                work.cancel_scope.deadline = anyio.current_time() + self.options.shutdown_grace
            if work.cancel_scope.cancelled_caught:
                log.warning("reconciles cancelled after the shutdown grace period")
        with anyio.move_on_after(2.0):
            await self.events.flush()

    async def _resyncs(self, scope: anyio.CancelScope) -> None:
        with scope:
            async with anyio.create_task_group() as tg:
                for c in self._controllers:
                    if c.resync_period and c.keys:
                        tg.start_soon(
                            lambda c=c: resync_every(c.queue, period=c.resync_period, keys=c.keys)
                        )
