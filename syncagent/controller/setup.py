"""Wiring of the reconcilers into a manager (as ``SetupWithManager`` does in controller-runtime).

Every watch comes from the program registry: the reconcilers' common watches, then each
program's own (``Program.connect``); the handlers below say which changes re-queue which keys.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sized
from dataclasses import dataclass, field
from typing import Any

import httpx2

from syncagent.controller.history import HistoryRecorder
from syncagent.controller.reconcilers import PROGRESS_INTERVAL, Reconcilers
from syncagent.kube import kinds
from syncagent.kube.objects import ObjectRef
from syncagent.programs import program as declared
from syncagent.programs import registry as reg
from syncagent.programs.fights import Fights
from syncagent.programs.program import Requeue, Watched, WatchFn
from syncagent.programs.registry import Registry
from syncagent.programs.view import CacheStore
from syncagent.programs.writemetrics import ApplyMetrics, FightMetrics
from syncagent.render import AgentAccount, Infrastructure
from syncagent.rest.resource import Resource
from syncagent.runtime.backoff import Backoff
from syncagent.runtime.cache import (
    Cache,
    beyond_status,
    controller_owner_key,
    enqueue,
    identity,
    owner_keys,
    self_key,
    split_key,
)
from syncagent.runtime.latency import ChangeLatency, LatencyMetrics
from syncagent.runtime.manager import Manager
from syncagent.runtime.process import ProcessMetrics
from syncagent.runtime.queue import WorkQueue
from syncagent.runtime.shard import ShardSettings
from syncagent.runtime.stages import StageMetrics
from syncagent.runtime.watch import WatchTarget
from syncagent.runtime.watchset import WatchSet
from syncagent.runtime.workers import DEFAULT_CONCURRENCY
from syncagent.ssa import Engine
from syncagent.ssa.certain import CREATE_ONLY
from syncagent.ssa.createcheck import check_create_only
from syncagent.ssa.fights import FightDetector, FightPolicy

Caches = list[Cache[Any]]
log = logging.getLogger(__name__)

# Kubernetes' own namespaces: an agent watching every namespace leaves them alone, so nobody
# who may create a graph there makes the agent run pods beside the cluster's components
# (docs/security.md). ``--namespace kube-system`` still reconciles it.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")


def outside_system_namespaces(field_selector: str | None) -> str:
    """``field_selector`` narrowed so the API server never sends objects of system namespaces."""
    terms = [field_selector] if field_selector else []
    return ",".join([*terms, *(f"metadata.namespace!={ns}" for ns in SYSTEM_NAMESPACES)])


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    """What the two controllers need from the command line (``syncagent run``)."""

    namespaces: tuple[str, ...] = ()  # empty: every namespace
    concurrency: int = DEFAULT_CONCURRENCY
    resync_period: float = 600.0
    progress_interval: float = PROGRESS_INTERVAL  # graph status progress (docs/lifecycle.md §1)
    discovery_backend: str = "kubernetes"
    agent_account: AgentAccount | None = None  # the agent's own ServiceAccount, when known
    infrastructure: Infrastructure = field(
        default_factory=Infrastructure
    )  # the operator configuration's addresses
    fights: FightPolicy | None = None
    shard: ShardSettings = field(default_factory=ShardSettings)  # whose graphs (runtime/shard.py)
    # Where the start-up check of the create-only write dry-runs its ConfigMap (ssa/createcheck.py)
    check_namespace: str = "default"


def setup(
    manager: Manager,
    client: httpx2.AsyncClient,
    settings: ControllerSettings,
    *,
    programs: Registry,
    history: HistoryRecorder | None = None,
) -> Reconcilers:
    """Watches, caches, the DGD and DCD controllers and the handlers that connect them;
    ``history`` records ownership transitions from every watch of whole objects."""
    for family in (ApplyMetrics, FightMetrics):  # on /metrics before their first sample
        manager.metrics.of(family)
    manager.watches = WatchSet(
        manager.clients.watches,  # their own pool: watches never starve requests
        metrics=manager.metrics,
        optional=manager.options.group_versions,
        on_not_found=manager.discovery.request_refresh,
        watch_timeout=manager.options.watch_timeout,
    )
    store = CacheStore()
    watch = _watcher(manager, store, settings.namespaces, history)

    caches = {w: _watch(watch, w, settings) for w in programs.common}
    reconcilers = _reconcilers(manager, client, store, settings, programs, caches[reg.GRAPHS])
    manager.before_lead.append(_create_check(manager, reconcilers.engine, settings))
    _measure_memos(manager, reconcilers)
    backoff = Backoff(base=1.0, cap=300.0)
    queues = [
        manager.add_controller(
            name,
            reconcile,
            concurrency=settings.concurrency,
            resync_period=settings.resync_period,
            keys=_keys_of(caches[watched]),
            backoff=backoff,
            requeue_on_capability_change=True,
            needs=needs,
        )
        for name, reconcile, watched, needs in (
            ("dgd", reconcilers.reconcile_graph, reg.GRAPHS, reconcilers.graph_reads),
            ("dcd", reconcilers.reconcile_component, reg.COMPONENTS, reconcilers.component_reads),
        )
    ]
    watches = list(caches.items())
    # Each program's watches (added after the reconcilers' own, as their controllers exist).
    watches += [(w, _watch(watch, w, settings)) for p in programs.programs for w in p.watches]
    _connect({declared.GRAPH: queues[0], declared.COMPONENT: queues[1]}, watches, store)
    return reconcilers


def _measure_memos(manager: Manager, reconcilers: Reconcilers) -> None:
    """The in-memory tables' sizes as gauges, read at each scrape (the soak watches them)."""
    memos: dict[str, Sized | None] = {
        "convergence": reconcilers.engine.cache,
        "events": manager.events,
        "fights": reconcilers.fights.detector if reconcilers.fights is not None else None,
        "latency": reconcilers.latency,
    }
    for memo, table in memos.items():
        if table is not None:
            manager.metrics.of(ProcessMetrics).measure_memo(memo, table.__len__)


def _watcher(
    manager: Manager,
    store: CacheStore,
    namespaces: tuple[str, ...],
    history: HistoryRecorder | None,
) -> WatchFn:
    """``watch(kind, transform=, **selectors)``: one watch per namespace (or one for all of
    them, system namespaces left out), each cache added to ``store``."""
    scopes: list[str | None] = list(namespaces) or [None]

    def watch(kind: Resource, *, transform: Any = identity, **selectors: Any) -> Caches:
        caches = []
        given = selectors.pop("field_selector", None)
        for ns in scopes:
            fields = outside_system_namespaces(given) if ns is None else given
            target = WatchTarget(
                kind,
                namespace=ns,
                field_selector=fields,
                **selectors,
            )
            cache = manager.watches.add(target, transform=transform)
            store.add(kind.kind, cache, selector=selectors.get("label_selector"))
            if history is not None and transform is identity:
                cache.add_handler(history.handler(kind))
            caches.append(cache)
        return caches

    return watch


def _watch(watch: WatchFn, watched: Watched, settings: ControllerSettings) -> Caches:
    return watch(
        watched.kind,
        transform=watched.transform or identity,
        label_selector=_selector(watched, settings),
        field_selector=watched.field_selector,
    )


def _selector(watched: Watched, settings: ControllerSettings) -> str | None:
    """A shard watches only its graphs: the API server filters them (runtime/shard.py)."""
    if watched == reg.GRAPHS and settings.shard.selector:
        return settings.shard.selector
    return watched.label_selector


def _reconcilers(
    manager: Manager,
    client: httpx2.AsyncClient,
    store: CacheStore,
    settings: ControllerSettings,
    programs: Registry,
    graphs: Caches,
) -> Reconcilers:
    metrics = manager.metrics
    latency = ChangeLatency(
        metrics.of(LatencyMetrics).graph_status_latency, delay=metrics.of(StageMetrics).watch_delay
    )
    for cache in graphs:
        cache.add_handler(latency.handle)
    return Reconcilers(
        engine=Engine(client, on_not_served=_rediscover(manager)),
        store=store,
        recorder=manager.events,
        capabilities=lambda: manager.capabilities,  # type: ignore[arg-type,return-value]
        metrics=manager.metrics,
        discovery_backend=settings.discovery_backend,
        agent_account=settings.agent_account,
        infrastructure=settings.infrastructure,
        fights=Fights(
            FightDetector(settings.fights),
            recorder=manager.events,
            metrics=manager.metrics,
            managers=programs.field_managers(),
        ),
        programs=programs,
        latency=latency,
        shard=settings.shard,
        progress_interval=settings.progress_interval,
    )


def _create_check(
    manager: Manager, engine: Engine, settings: ControllerSettings
) -> Callable[[], Awaitable[None]]:
    """Check once whether admission admits the create-only write; where it refuses it, every
    create reads first (docs/write-protocol.md §4), said in one warning and a metric."""
    done = False

    async def check() -> None:
        nonlocal done
        if done:
            return
        try:
            found = await check_create_only(engine, settings.check_namespace)
        except Exception as err:  # a failed check must not stop the agent
            log.info(
                "create-only check failed; creates stay create-only", extra={"error": str(err)}
            )
            return
        done = found.admitted is not None
        engine.create_only = found.admitted is not False
        manager.metrics.of(ApplyMetrics).create_fallback.set(0 if engine.create_only else 1)
        if found.admitted is False:
            log.warning(
                "admission refuses the create-only write; creates read first from now on",
                extra={
                    "object": found.subject,
                    "error": found.refusal,
                    "remedy": f"let admission admit resourceVersion {CREATE_ONLY} on CREATE "
                    "(docs/write-protocol.md section 4)",
                },
            )
        elif found.admitted is None:
            log.info(
                "create-only check inconclusive; creates stay create-only",
                extra={"object": found.subject, "error": found.refusal},
            )

    return check


def _rediscover(manager: Manager) -> Callable[[ObjectRef], None]:
    """A request found its kind not served (a CRD removed since discovery ran): discover again
    now, as after a watch's 404, so the graphs are routed by what the server serves."""

    def not_served(ref: ObjectRef) -> None:
        log.info(
            "kind not served; refreshing discovery",
            extra={"object": ref.subject, "apiVersion": ref.api_version},
        )
        manager.discovery.request_refresh()

    return not_served


def _keys_of(caches: Caches) -> Callable[[], list[str]]:
    # Cache iterates over objects, not keys.
    return lambda: [k for c in caches for k in c.keys()]  # noqa: SIM118


def _connect(
    queues: dict[str, WorkQueue],
    watches: list[tuple[Watched, Caches]],
    store: CacheStore,
) -> None:
    """Which changes re-queue which keys: each watch's declared ``requeues``, in order."""
    own = {
        declared.GRAPH: _caches_of(watches, reg.GRAPHS),
        declared.COMPONENT: _caches_of(watches, reg.COMPONENTS),
    }
    for watched, caches in watches:
        for requeue in watched.requeues:
            for cache in caches:
                cache.add_handler(_handler(requeue, queues[requeue.queue], own, store))


def _caches_of(watches: list[tuple[Watched, Caches]], watched: Watched) -> Caches:
    return next(caches for w, caches in watches if w == watched)


def _handler(
    requeue: Requeue, queue: WorkQueue, own: dict[str, Caches], store: CacheStore
) -> Callable[[Any], None]:
    if requeue.key == declared.NAMESPACE:
        return _namespace_handler(queue, own[requeue.queue])
    if requeue.key == declared.SELF:
        # A graph's or component's own status write does not wake it again.
        return beyond_status(enqueue(queue.add, self_key))
    kind = kinds.DGD if requeue.queue == declared.GRAPH else kinds.DCD
    if requeue.key == declared.CONTROLLER:
        keys = controller_owner_key(kind.kind, api_group=kind.group)
    elif requeue.key == declared.OWNERS:
        keys = owner_keys(kind.kind, api_group=kind.group)
    elif callable(requeue.key):
        keys = requeue.key(store)
    else:
        raise ValueError(
            f"Requeue {requeue.key!r}: use SELF, CONTROLLER, OWNERS, NAMESPACE or a key function"
        )
    return enqueue(_soon(queue) if requeue.soon else queue.add, keys)


# A graph's status follows its children: the changes of its children within this window (four
# components becoming ready, a create and the status writes after it) cost one reconcile.
CHILD_WINDOW = 1.0


def _soon(queue: WorkQueue) -> Callable[[str], None]:
    return lambda key: queue.add_soon(key, CHILD_WINDOW)


def _namespace_handler(queue: WorkQueue, caches: Caches) -> Callable[[Any], None]:
    """Re-queue every key of ``caches`` in the namespace of the changed object."""

    def handle(change: Any) -> None:
        for cache in caches:
            for key in cache.keys():  # noqa: SIM118 - a Cache iterates over objects
                if split_key(key)[0] == change.namespace:
                    queue.add(key)

    return handle
