"""One graph reconcile (docs/design.md §3): the steps every pathway shares, run once, here.

checkpoints -> environment -> what the pathway reads -> restart plan -> its root object (render
and apply) -> the components as DCDs (render) -> discovery identity -> wait-for-leader ->
the DCDs it leaves to components -> scaling adapters (made, then their replicas into the
graph's spec) -> readiness -> result -> retire -> status and events.

A pathway (:class:`Pathway`) supplies only what differs: what it reads, how it plans restarts,
renders and applies its root object, reads readiness (and hands Services over), retires stale
objects and reports each component. A step every pathway needs is added to :func:`run`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from syncagent.api import Component
from syncagent.kube import being_deleted
from syncagent.programs import adapter_replicas, adapter_sync, status, wait_leader_configmap
from syncagent.programs.base import ProgramResult
from syncagent.programs.checkpoint_gate import Checkpoints, read_checkpoints
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.readiness import Readiness
from syncagent.programs.restart import RestartPlan, plan_restart
from syncagent.programs.view import Obj, environment
from syncagent.render import (
    Environment,
    GraphLive,
    Rendered,
    discovery_identity,
    generate_dcds,
    graph_owner,
    source_of,
)
from syncagent.render.inputs import discovery_on
from syncagent.render.naming import dynamo_namespace
from syncagent.ssa import owner_of

Live = TypeVar("Live")


@dataclass
class Turn:
    """What one reconcile has worked out so far; the pathway's hooks read and add to it.

    ``worker_hash``: the generation the DCD names carry (the Component pathway's). ``latest``:
    each applied DCD as the API server returned it (a DCD being deleted: as live);
    ``deleting``: the names of those being deleted, left alone.
    """

    ctx: GraphContext
    checkpoints: Checkpoints
    env: Environment
    restart: RestartPlan = field(default_factory=lambda: RestartPlan(None))
    graph_live: GraphLive = field(default_factory=GraphLive)
    worker_hash: str = ""
    dcds: list[Rendered] = field(default_factory=list)
    latest: dict[str, Obj | None] = field(default_factory=dict)
    deleting: set[str] = field(default_factory=set)
    requeue_after: float | None = None

    def dynamo_namespace(self, component: Component) -> str:
        """The Dynamo namespace ``component`` runs in (before any worker generation)."""
        ctx, global_ns = self.ctx, bool(component.global_dynamo_namespace)
        return dynamo_namespace(ctx.namespace, ctx.name, global_namespace=global_ns)

    def plan_restart(self, done: Callable[[str], bool]) -> RestartPlan:
        """The restart state of the components, ``done(c)`` saying whether ``c`` rolled."""
        ctx = self.ctx
        names = [c.name for c in ctx.typed.spec.components]
        return plan_restart(ctx.restart, ctx.previous.get("restart"), names, done=done)


class Pathway(Protocol[Live]):
    """What one pathway does differently within :func:`run`."""

    def read(self, turn: Turn) -> Live:
        """What it reads before any write; may refuse (raise) a graph it must not touch."""
        ...

    def plan(self, turn: Turn, live: Live) -> None:
        """``turn.restart``, ``turn.graph_live`` (and ``turn.worker_hash``) from ``live``."""
        ...

    async def apply_root(self, turn: Turn, live: Live) -> None:
        """Render and apply its own root object (before the identity and the DCDs)."""
        ...

    def applies_dcd(self, live: Live, component: str) -> bool:
        """Whether ``component`` is served by a DCD on this pathway."""
        ...

    async def settle(self, turn: Turn, live: Live) -> list[tuple[str, Readiness]]:
        """Readiness of what it applied (and the Service handoff that waits on it)."""
        ...

    async def retire(self, turn: Turn, live: Live, *, successful: bool) -> list[str]:
        """Delete what this graph no longer needs; name what still waits."""
        ...

    def components(self, turn: Turn, live: Live) -> dict[str, dict[str, Any]]:
        """``status.components``."""
        ...


async def run(ctx: GraphContext, pathway: Pathway[Live]) -> ProgramResult:
    """One reconcile of ``ctx``'s graph on ``pathway``. Errors raised here become the status
    in ``programs.graph.reconcile``."""
    turn = start(ctx)
    live = pathway.read(turn)
    pathway.plan(turn, live)
    await pathway.apply_root(turn, live)
    turn.dcds = generate_dcds(
        ctx.typed, live=turn.graph_live, env=turn.env, worker_hash=turn.worker_hash
    )
    await apply_identity(turn)
    await wait_leader_configmap.sync_graph(ctx)
    for dcd in turn.dcds:
        if pathway.applies_dcd(live, dcd.body["spec"]["name"]):
            turn.latest[dcd.name] = await _apply_dcd(turn, dcd)
    await adapter_sync.sync(ctx)
    await adapter_replicas.follow(ctx)
    resources = await pathway.settle(turn, live)
    result = status.result_of(resources, waiting_checkpoints=turn.checkpoints.waiting())
    stale = await pathway.retire(turn, live, successful=result.ready)
    built = build_status(
        ctx,
        result,
        components=pathway.components(turn, live),
        restart=turn.restart.status,
        checkpoints=turn.checkpoints.status(),
        stale=stale,
    )
    return ProgramResult(built, list(ctx.writer.events), requeue_after=turn.requeue_after)


def start(ctx: GraphContext) -> Turn:
    """The checkpoints the components restore from and the environment they render in."""
    checkpoints = read_checkpoints(ctx.store, ctx.namespace, ctx.typed.spec.components)
    env = environment(
        ctx.store,
        ctx.namespace,
        discovery_backend=ctx.discovery_backend,
        checkpoints=checkpoints.ready,
        agent_account=ctx.agent_account,
        infrastructure=ctx.infrastructure,
    )
    return Turn(ctx, checkpoints, env)


async def apply_identity(turn: Turn) -> None:
    """The graph's discovery identity, when a component discovers through Kubernetes."""
    ctx = turn.ctx
    if not any(discovery_on(source_of(d, graph=ctx.name), turn.env) for d in turn.dcds):
        return
    owner = owner_of(ctx.graph)
    for obj in discovery_identity(ctx.name, namespace=ctx.namespace, owner=graph_owner(ctx.typed)):
        current = ctx.store.get(obj.kind, ctx.namespace, obj.name)
        if not being_deleted(current):
            await ctx.writer.apply_owned(obj, owner=owner, live=current)


async def _apply_dcd(turn: Turn, dcd: Rendered) -> Obj | None:
    ctx = turn.ctx
    current = ctx.store.get(dcd.kind, ctx.namespace, dcd.name)
    if being_deleted(current):
        # A child being deleted counts as absent; it is recreated once it is gone.
        turn.deleting.add(dcd.name)
        return current
    entry = await ctx.writer.apply_owned(dcd, owner=owner_of(ctx.graph), live=current)
    return entry.object
