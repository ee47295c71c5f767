"""The outer reconcilers (docs/design.md §8).

- DGD: read the graph from the cache, route it (docs/routing.md §2), validate, run the program,
  persist the status ONCE (forced SSA on the status subresource under
  ``syncagent/graph-status``, with the graph's resourceVersion as read at the start as a
  precondition), then emit the queued events.
- DCD: render and apply its Deployment or LeaderWorkerSet and Service (ownership pass
  included), then its status under ``syncagent/component-status``, then its events.

Objects with ``metadata.deletionTimestamp`` are not reconciled.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fieldmanagers import component_status as component_status_manager
from fieldmanagers import graph_status as graph_status_manager
from syncagent.api.schemas import LiveChecks
from syncagent.kube import being_deleted, kinds
from syncagent.kube.objects import Body
from syncagent.programs import status
from syncagent.programs.base import ProgramResult, QueuedEvent
from syncagent.programs.capabilities import Capabilities
from syncagent.programs.context import GraphContext
from syncagent.programs.fights import Fights, graph_of_component
from syncagent.programs.graph import finished_events, graph_context, route, run_graph
from syncagent.programs.registry import Registry
from syncagent.programs.view import Obj, Store
from syncagent.programs.workload import (
    ComponentContext,
    WorkloadProgram,
    finished_component_events,
)
from syncagent.programs.writes import Writer
from syncagent.render import AgentAccount, Infrastructure
from syncagent.runtime.cache import split_key
from syncagent.runtime.events import EventRecorder, ObjectRef
from syncagent.runtime.latency import ChangeLatency
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.shard import ShardSettings
from syncagent.runtime.workers import Result
from syncagent.ssa import ApplyOptions, Engine, PreconditionError, UndeclaredFieldError

log = logging.getLogger(__name__)

API_VERSION = "nvidia.com/v1beta1"
STALE_READ_RETRY = 1.0
# Our own status write is on its way to the watch cache; look again very soon.
OWN_WRITE_LAG_RETRY = 0.1
GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
# Write conflicts in a row that a key retries without reporting them in its status: co-owners
# joining a shared model Service at once move it under each other's guarded writes. With the
# queue's backoff (1 s doubling) up to about 30 s; then the conflict is reported as an error.
QUIET_CONFLICTS = 5
# A graph status that reports only progress is written at most this often (docs/lifecycle.md §1).
PROGRESS_INTERVAL = 5.0


@dataclass
class Reconcilers:
    """The DGD and DCD reconcilers of one agent, sharing the engine, caches and recorder."""

    engine: Engine
    store: Store
    recorder: EventRecorder
    capabilities: Callable[[], Capabilities | None]
    metrics: Metrics | None = None
    discovery_backend: str = "kubernetes"
    agent_account: AgentAccount | None = None  # no pod may run as it (render/podtemplate.py)
    infrastructure: Infrastructure = field(
        default_factory=Infrastructure
    )  # the operator configuration's addresses
    fights: Fights | None = None  # the fight detector (None: conflicts are always forced)
    programs: Registry = field(kw_only=True)  # the composition root's
    latency: ChangeLatency | None = None  # graph change -> status write (runtime/latency.py)
    shard: ShardSettings = field(default_factory=ShardSettings)  # whose standalone DCDs
    progress_interval: float = PROGRESS_INTERVAL
    clock: Callable[[], float] = time.monotonic
    checks: LiveChecks = field(default_factory=LiveChecks)  # schema checks, remembered
    # Per (controller, key), the resourceVersion our last status write replaced. A cached
    # object still at that version predates our own write: reconciling it would act on stale
    # status. Status changes wake nothing (docs/caches.md), so a status write skipped because
    # the stale cache already showed it would never be made: the cache then catches up with
    # our own earlier status, and it stays (a component left Available=False, issue 23). A
    # graph's write would also fail its precondition, dropping the events of what it did.
    _superseded: dict[tuple[str, str], str] = field(default_factory=dict)
    # Per (controller, key), the write conflicts in a row (QUIET_CONFLICTS).
    _conflicts: dict[tuple[str, str], int] = field(default_factory=dict)
    # Per kind, the top-level status fields the served schema does not declare: upstream's own
    # DGD CRD lacks ``status.routing`` (our design), and a takeover keeps the CRDs it finds.
    _undeclared: dict[str, set[str]] = field(default_factory=dict)
    # Per graph key, when (``clock``) this agent last wrote its status.
    _status_written: dict[str, float] = field(default_factory=dict)

    def writer(self, **options: Any) -> Writer:
        """A writer of one reconcile, counting under the registry's field managers."""
        return Writer(
            self.engine,
            takeover=self.programs.takeover_policy,
            metrics=self.metrics,
            managers=self.programs.field_managers(),
            **options,
        )

    # -- DGD ----------------------------------------------------------------------------------
    async def reconcile_graph(self, key: str) -> Result | None:
        namespace, name = split_key(key)
        graph = self.store.get(kinds.DGD.kind, namespace, name)
        caps = self.capabilities()
        if graph is None or being_deleted(graph):
            self._forget(("dgd", key))
            if graph is not None:
                await self.writer().release_operator_finalizers(graph)
            return None
        if caps is None:
            return Result(requeue_after=1.0)
        version = Body(graph).meta.resource_version
        if self._predates_own_write(("dgd", key), version):
            return Result(requeue_after=OWN_WRITE_LAG_RETRY)
        ctx = self.graph_context(graph, caps)
        outcome = await self.run_graph(ctx)
        result = await self._finish_graph(key, ctx, outcome)
        return replace(result or Result(), observed=version)

    def graph_reads(self, key: str) -> frozenset[str] | None:
        """The resources a reconcile of graph ``key`` reads: a watch of any other one that has
        not synced does not hold it back (``None``: all, before discovery)."""
        namespace, name = split_key(key)
        graph, caps = self.store.get(kinds.DGD.kind, namespace, name), self.capabilities()
        if caps is None:
            return None
        if graph is None:
            return frozenset()
        _, selection = route(graph, caps, store=self.store, programs=self.programs)
        return self.programs.resources_read(selection.pathway)

    def component_reads(self, _key: str) -> frozenset[str]:
        """A component reads only the common caches, never a pathway's own kinds."""
        return self.programs.resources_read(None)

    def graph_context(self, graph: Obj, caps: Capabilities) -> GraphContext:
        writer = self.writer(fights=self.fights, graph=graph)
        return graph_context(
            graph,
            caps,
            store=self.store,
            writer=writer,
            discovery_backend=self.discovery_backend,
            agent_account=self.agent_account,
            infrastructure=self.infrastructure,
            programs=self.programs,
            checks=self.checks,
        )

    async def run_graph(self, ctx: GraphContext) -> ProgramResult:
        return await run_graph(ctx)

    async def _finish_graph(
        self, key: str, ctx: GraphContext, outcome: ProgramResult
    ) -> Result | None:
        if self._quiet_conflict("dgd", key, conflict=outcome.conflict):
            self._emit(ctx.graph, outcome.events)
            return Result(conflict=f"{ctx.ref}: {_ready_message(outcome.status)}; retrying")
        held = self._progress_held(key, ctx.graph, outcome)
        if held is not None:
            self._emit(ctx.graph, finished_events(ctx, outcome))
            return _requeue(held, outcome.requeue_after, ctx.writer.requeue_after)
        manager = graph_status_manager.MANAGER.name
        try:
            # The upstream operator's status entry becomes ours first (docs/ownership.md §1;
            # a component's moves with its content apply). The guarded write changes nothing
            # else, so the status write's precondition follows its version.
            graph = await ctx.writer.take_over(ctx.graph, manager=manager) or ctx.graph
            wrote = await self._write_status(graph, outcome.status, manager, precondition=True)
        except PreconditionError:
            # A stale read: persist nothing, emit nothing, and look again with the new object.
            # The watch event of the newer graph re-queues it at once; this is only a fallback,
            # delayed so a cache that lags (a watch reconnecting) does not spin the key.
            log.info(
                f"{ctx.ref}: graph changed during reconcile; requeued", extra={"object": ctx.ref}
            )
            return Result(requeue_after=STALE_READ_RETRY)
        if wrote:
            self._superseded[("dgd", key)] = Body(graph).meta.resource_version
            self._status_written[key] = self.clock()
            if self.latency is not None:
                self.latency.written(key, ctx.generation)
        self._emit(ctx.graph, finished_events(ctx, outcome))
        if outcome.retry:
            # The error is in the persisted status already: back off and retry.
            return Result(error=f"{ctx.ref}: {_ready_message(outcome.status)}")
        return _requeue(outcome.requeue_after, ctx.writer.requeue_after)

    def _progress_held(self, key: str, graph: Obj, outcome: ProgramResult) -> float | None:
        """How long to hold back a status that reports only progress (docs/lifecycle.md §1);
        None: write it now. The key is looked at again when the hold ends."""
        if outcome.retry:
            return None
        return status.progress_hold(
            outcome.status,
            Body(graph).status,
            written_at=self._status_written.get(key),
            now=self.clock(),
            interval=self.progress_interval,
        )

    # -- DCD ----------------------------------------------------------------------------------
    async def reconcile_component(self, key: str) -> Result | None:
        namespace, name = split_key(key)
        dcd = self.store.get(kinds.DCD.kind, namespace, name)
        caps = self.capabilities()
        if dcd is None or being_deleted(dcd) or self._graph_gone(dcd):
            self._forget(("dcd", key))
            return None
        if self._standalone(dcd) and not self.shard.matches(dcd["metadata"].get("labels")):
            return None  # another shard's (runtime/shard.py)
        if caps is None:
            return Result(requeue_after=1.0)
        version = Body(dcd).meta.resource_version
        if self._predates_own_write(("dcd", key), version):
            return Result(requeue_after=OWN_WRITE_LAG_RETRY)
        writer = self.writer(on=dcd, fights=self.fights, graph=graph_of_component(dcd))
        ctx = ComponentContext(
            dcd=dcd,
            caps=caps,
            store=self.store,
            writer=writer,
            discovery_backend=self.discovery_backend,
            agent_account=self.agent_account,
            infrastructure=self.infrastructure,
            checks=self.checks,
        )
        outcome = await WorkloadProgram().reconcile(ctx)
        if self._quiet_conflict("dcd", key, conflict=outcome.conflict):
            self._emit(dcd, outcome.events)
            return Result(conflict=f"{ctx.ref}: {_available_message(outcome.status)}; retrying")
        if await self._write_status(
            dcd, outcome.status, component_status_manager.MANAGER.name, precondition=False
        ):
            self._superseded[("dcd", key)] = version
        self._emit(dcd, finished_component_events(dcd, outcome))
        if outcome.retry:
            return Result(error=f"{ctx.ref}: {_available_message(outcome.status)}")
        return _requeue(writer.requeue_after)

    def _graph_gone(self, dcd: Obj) -> bool:
        """A DCD of a graph that no longer exists is garbage collection's (or, while it lacks
        its controller reference, its graph's) business: rendering it would create workloads
        and, as a seemingly standalone DCD, a discovery identity nobody cleans up."""
        view = Body(dcd)
        controller = view.controller
        if controller is not None and controller.kind == kinds.DGD.kind:
            live = self.store.get(kinds.DGD.kind, view.meta.namespace, controller.name)
            return live is None or Body(live).meta.uid != controller.uid
        return controller is None and bool(view.meta.labels.get(GRAPH_LABEL))

    @staticmethod
    def _standalone(dcd: Obj) -> bool:
        view = Body(dcd)
        return view.controller is None and not view.meta.labels.get(GRAPH_LABEL)

    # -- shared -------------------------------------------------------------------------------
    def _predates_own_write(self, slot: tuple[str, str], version: str) -> bool:
        """Whether the cached object (at ``version``) is older than our own last status write
        of it; once the cache has moved on, the slot is cleared."""
        if self._superseded.get(slot) == version:
            return True
        self._superseded.pop(slot, None)
        return False

    def _forget(self, slot: tuple[str, str]) -> None:
        self._superseded.pop(slot, None)
        self._conflicts.pop(slot, None)
        if slot[0] == "dgd":
            self._status_written.pop(slot[1], None)

    def _quiet_conflict(self, controller: str, key: str, *, conflict: bool) -> bool:
        return quiet_conflict(self._conflicts, (controller, key), conflict=conflict)

    async def _write_status(
        self, obj: Obj, desired: dict[str, Any], manager: str, *, precondition: bool
    ) -> bool:
        """Write the whole status once, and only when it differs from the live one; a status
        field the served schema turns out not to declare is left out from then on."""
        kind = str(obj["kind"])
        try:
            return await self._apply_status(obj, desired, manager, precondition=precondition)
        except UndeclaredFieldError as err:
            fields = _top_status_fields(err.fields)
            if fields is None:
                raise
            self._undeclared.setdefault(kind, set()).update(fields)
            log.warning(
                f"{err.subject}: the served {kind} schema does not declare "
                f"{', '.join('status.' + f for f in sorted(fields))} (a CRD that is not "
                "syncagent's, e.g. upstream's); status is written without it. Apply syncagent's "
                "CRDs (syncagent crds | kubectl apply --server-side -f -) to keep it",
                extra={"object": err.subject, "field": sorted(fields)},
            )
            return await self._apply_status(obj, desired, manager, precondition=precondition)

    async def _apply_status(
        self, obj: Obj, desired: dict[str, Any], manager: str, *, precondition: bool
    ) -> bool:
        left_out = self._undeclared.get(str(obj["kind"]), ())
        desired = {k: v for k, v in desired.items() if k not in left_out}
        if status.status_equal(desired, Body(obj).status):
            return False
        meta = Body(obj).meta
        body_meta: dict[str, Any] = {"name": meta.name, "namespace": meta.namespace}
        if precondition:
            body_meta["resourceVersion"] = meta.resource_version
        body = {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "metadata": body_meta,
            "status": desired,
        }
        entry = await self.writer().apply(
            body,
            ApplyOptions(
                manager=manager,
                force=True,
                subresource="status",
                resource_version_precondition=precondition,
            ),
            live=obj,
        )
        return entry.changed

    def _emit(self, default: Obj, events: list[QueuedEvent]) -> None:
        for event in events:
            target = ObjectRef.of(event.on if event.on is not None else default)
            self.recorder.record(
                target, type=event.type, reason=event.reason, message=event.message
            )


def _top_status_fields(paths: tuple[str, ...]) -> set[str] | None:
    """The top-level status field names of ``.status.<name>`` paths; ``None`` when any path is
    elsewhere (a spec or nested field missing from the schema is a real error)."""
    names = set()
    for path in paths:
        parts = path.split(".")
        if len(parts) != 3 or parts[:2] != ["", "status"]:
            return None
        names.add(parts[2])
    return names


def quiet_conflict(streaks: dict[Any, int], slot: Any, *, conflict: bool) -> bool:
    """Whether this outcome is a write conflict to retry without reporting it: the first
    QUIET_CONFLICTS in a row of ``slot`` are; any other outcome starts its count again."""
    if not conflict:
        streaks.pop(slot, None)
        return False
    streaks[slot] = streaks.get(slot, 0) + 1
    return streaks[slot] <= QUIET_CONFLICTS


def _requeue(*delays: float | None) -> Result | None:
    """Look again after the shortest of ``delays`` (a program's wait, a fight's backoff)."""
    given = [d for d in delays if d]
    return Result(requeue_after=min(given)) if given else None


def _ready_message(st: Mapping[str, Any]) -> str:
    cond = status.find(st.get("conditions"), status.READY) or {}
    return str(cond.get("message") or "")


def _available_message(st: Mapping[str, Any]) -> str:
    cond = status.find(st.get("conditions"), status.AVAILABLE) or {}
    return str(cond.get("message") or "")
