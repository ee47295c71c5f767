"""Leaving the DS or Grove pathway for the Component pathway (docs/routing.md §3).

Runs after the Component program applied the DCDs, in the same reconcile:
1. Services the graph controls are handed to the replacement DCDs (selector unchanged; the DCD
   writes its own selector once its workload is ready).
2. Model Services: control moves to the first formerly selected replacement DCD referencing the
   model (else any referencing DCD); a missing one is recreated under it; then the graph leaves.
3. Only once every DCD is ready: the DS / PodCliqueSet is deleted (``StaleWorkloadDeleted``).
The ``WorkloadPathway`` condition names what is still waiting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncagent.kube import being_deleted, controlled_by, controller_of, kinds
from syncagent.kube.objects import Body
from syncagent.programs import migration, modelservice, readiness, service_cutover, status
from syncagent.programs.base import ProgramResult
from syncagent.programs.component.program import PATHWAY
from syncagent.programs.context import GraphContext, pathway_condition
from syncagent.programs.ownership import SCHEME
from syncagent.programs.view import Obj, environment
from syncagent.render import generate_dcds, graph_worker_hash, render_component, source_of
from syncagent.ssa import OwnerRef, leave, owner_of


def _name(obj: Mapping[str, Any] | None) -> str:
    return Body(obj).meta.name


async def _live_dcd(ctx: GraphContext, name: str) -> Obj | None:
    cached = ctx.store.get(kinds.DCD.kind, ctx.namespace, name)
    if cached is not None:
        return cached
    stub = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": kinds.DCD.kind,
        "metadata": {"name": name, "namespace": ctx.namespace},
    }
    return await ctx.writer.applier.get(stub)


async def finish(ctx: GraphContext, result: ProgramResult) -> ProgramResult:
    """Hand Services back and remove the old family once the DCDs serve."""
    leftovers = migration.other_pathways(ctx, PATHWAY)
    # The hand-back does not depend on the old workload still existing: a DS or PodCliqueSet
    # deleted by hand (or its CRD removed) leaves Services the DCDs would otherwise wait for.
    if result.retry or not (leftovers or _graph_holds_services(ctx)):
        return result
    env = environment(
        ctx.store,
        ctx.namespace,
        discovery_backend=ctx.discovery_backend,
        agent_account=ctx.agent_account,
    )
    dcds = generate_dcds(ctx.typed, env=env, worker_hash=graph_worker_hash(ctx.typed))
    live = {d.name: await _live_dcd(ctx, d.name) for d in dcds}
    graph = owner_of(ctx.graph)
    start = len(ctx.writer.events)
    # The multinode workers first (those another pathway's workload held as roles): they take
    # control of shared model Services.
    formerly = {c.name for c in ctx.typed.spec.components if c.is_worker_type and c.is_multinode}
    ordered = [d for d in dcds if d.body["spec"]["name"] in formerly]
    ordered += [d for d in dcds if d.body["spec"]["name"] not in formerly]
    models: dict[str, list[tuple[Any, OwnerRef]]] = {}
    for dcd in ordered:
        obj = live.get(dcd.name)
        if obj is None or being_deleted(obj):
            continue
        ref = owner_of(obj)
        source = source_of(dcd, graph=ctx.name)
        objects = render_component(source, env=env, lws=True, uid=ref.uid)
        if objects.service is not None:
            svc = ctx.store.get("Service", ctx.namespace, objects.service.name)
            if svc is not None and controlled_by(svc, graph.uid) and not being_deleted(svc):
                await service_cutover.hand_over(
                    ctx.writer, objects.service, svc, new=ref, old=graph
                )
        if objects.model_service is not None:
            models.setdefault(objects.model_service.name, []).append((objects.model_service, ref))
    for candidates in models.values():
        await _move_model(ctx, candidates, graph=graph)
    ready = all(readiness.dcd_readiness(live.get(d.name)).ready for d in dcds)
    remaining = await migration.retire(ctx, leftovers, when=ready)
    stale_dcds = migration.stale_own(ctx, kinds.DCD, keep={d.name for d in dcds})
    if leftovers:
        names = migration.describe(remaining + stale_dcds)
        _replace_pathway(ctx, result.status, pathway_condition(ctx, stale=names))
    result.events = [*result.events, *ctx.writer.events[start:]]
    return result


async def _move_model(
    ctx: GraphContext, candidates: list[tuple[Any, OwnerRef]], *, graph: OwnerRef
) -> None:
    rendered, first = candidates[0]
    async with modelservice.turn(ctx.store, ctx.namespace, rendered.name) as held:
        live = held.view
        if being_deleted(live):
            return
        if live is None:
            await modelservice.ensure(ctx.writer, ctx.store, rendered, owner=first, held=held)
            return
        current = controller_of(live)
        if current is not None and current.uid == graph.uid:
            live = await ctx.writer.set_controller(live, controller=first, manager=rendered.manager)
            held.left = live
        if any(ref.uid == graph.uid for ref, _ in Body(live).owners()):
            left = await leave(
                ctx.writer.applier, live, owner_uid=graph.uid, scheme=SCHEME, live=live
            )
            held.left = left.object


def _graph_holds_services(ctx: GraphContext) -> bool:
    """Whether the graph still controls or co-owns a Service (none do on this pathway once
    the hand-back is complete)."""
    return any(
        Body(svc).owned_by(ctx.uid)
        for svc in ctx.store.list("Service", ctx.namespace, owner=ctx.uid)
        if not being_deleted(svc)
    )


def _replace_pathway(ctx: GraphContext, st: dict[str, Any], cond: tuple[str, str, str]) -> None:
    conditions = list(st.get("conditions") or [])
    fresh = status.condition(status.WORKLOAD_PATHWAY, *cond)
    stamped = status.with_transition_times([fresh], ctx.previous.get("conditions"), now=ctx.now)[0]
    st["conditions"] = [
        stamped if c.get("type") == status.WORKLOAD_PATHWAY else c for c in conditions
    ]


__all__ = ["finish"]
