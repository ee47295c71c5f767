"""Services of a DisaggregatedSet graph, the cutover from the selected DCDs and the cleanup of
what other pathways left (docs/disaggregatedset.md §5-6, docs/routing.md §3)."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from syncagent.kube import being_deleted, kinds
from syncagent.programs import migration, service_cutover
from syncagent.programs.context import GraphContext
from syncagent.programs.disaggregatedset.plan import (
    Plan,
    name_of,
    spec_name,
    uid_of,
)
from syncagent.programs.disaggregatedset.render import ds_name, pending_selector, service_selector
from syncagent.programs.disaggregatedset.routing import PATHWAY
from syncagent.programs.view import Obj
from syncagent.render import (
    component_service,
    graph_owner,
    render_component,
    source_of,
)
from syncagent.render.naming import component_service_name, model_service_name
from syncagent.render.services import wants_component_service
from syncagent.ssa import owner_of


async def services(
    ctx: GraphContext,
    plan: Plan,
    revisions: Mapping[str, str | None],
    *,
    switch: bool,
) -> bool:
    """Services of selected components and their models; whether all are the graph's."""
    graph = owner_of(ctx.graph)
    our_dcds = {uid_of(d) for d in plan.live_dcds}
    selected_dcds = {uid_of(d) for d in plan.live_dcds if spec_name(d) in plan.selected_names}
    owned = True
    sources = []
    for dcd in plan.dcds:
        component = dcd.body["spec"]["name"]
        if component not in plan.selected_names:
            continue
        source = source_of(dcd, graph=ctx.name)
        sources.append(source)
        if wants_component_service(source, plan.env):
            rendered = component_service(source, env=plan.env, owner=graph_owner(ctx.typed))
            role = plan.roles[component]
            target = service_selector(ds_name(ctx.name), role, revisions.get(role))
            svc = await service_cutover.ensure_component_service(
                ctx.writer,
                ctx.store,
                rendered,
                graph=graph,
                target=target,
                switch=switch,
                our_dcds=our_dcds,
                hold=functools.partial(pending_selector, target=target),
            )
            owned = owned and service_cutover.graph_controls(svc, graph)
    await service_cutover.ensure_model_services(ctx, sources, take_from=selected_dcds)
    return owned


async def hand_back(ctx: GraphContext, plan: Plan, latest: Mapping[str, Obj | None]) -> None:
    """Services of non-selected components the graph controls (left by Grove) go to
    their DCDs at once; each DCD keeps the selector until its workload is ready."""
    graph = owner_of(ctx.graph)
    for dcd in plan.dcds:
        live_dcd = latest.get(dcd.name)
        if live_dcd is None or dcd.body["spec"]["name"] in plan.selected_names:
            continue
        source = source_of(dcd, graph=ctx.name)
        if not wants_component_service(source, plan.env):
            continue
        name = component_service_name(dcd.name)
        svc = ctx.store.get("Service", ctx.namespace, name)
        if svc is None or being_deleted(svc) or not service_cutover.graph_controls(svc, graph):
            continue
        ref = owner_of(live_dcd)
        rendered = render_component(source, env=plan.env, lws=True, uid=ref.uid).service
        if rendered is not None:
            await service_cutover.hand_over(ctx.writer, rendered, svc, new=ref, old=graph)


async def cutover(ctx: GraphContext, plan: Plan, *, when: bool) -> None:
    """The selected components' DCDs go once the DS serves them (``when``)."""
    selected = [d for d in plan.live_dcds if spec_name(d) in plan.selected_names]
    if not await migration.retire(ctx, selected, when=when):
        plan.deleted.update(name_of(d) for d in selected)


async def cleanup(
    ctx: GraphContext,
    plan: Plan,
    latest: Mapping[str, Obj | None],
    *,
    successful: bool,
) -> list[str]:
    """Delete removed components now; other pathways' objects once ``successful``."""
    components = {c.name for c in ctx.typed.spec.components}
    cutover_waits: list[Obj] = []  # the cutover deletes them once the DS is ready
    removed: list[Obj] = []
    replaced: list[Obj] = []
    for dcd in migration.stale_own(ctx, kinds.DCD, keep=set(latest)):
        if name_of(dcd) in plan.deleted:
            continue
        component = spec_name(dcd)
        if component in plan.selected_names:
            cutover_waits.append(dcd)
        else:
            (replaced if component in components else removed).append(dcd)
    # A removed component serves nothing the graph still wants: nothing to wait for.
    await migration.retire(ctx, removed, when=True)
    others = migration.other_pathways(ctx, PATHWAY) + migration.stale_own(
        ctx, kinds.DISAGGREGATED_SET, keep={ds_name(ctx.name)}
    )
    waiting = await migration.retire(ctx, replaced + others, when=successful)
    if not successful:
        return migration.describe(cutover_waits + waiting)
    await service_cutover.delete_stale_services(
        ctx.writer,
        ctx.store,
        namespace=ctx.namespace,
        graph=owner_of(ctx.graph),
        keep=wanted_services(ctx, plan),
        keep_models=wanted_models(plan),
    )
    return migration.describe([d for d in cutover_waits if not being_deleted(d)])


def wanted_services(ctx: GraphContext, plan: Plan) -> set[str]:
    out = set()
    for dcd in plan.dcds:
        source = source_of(dcd, graph=ctx.name)
        if wants_component_service(source, plan.env):
            out.add(component_service_name(dcd.name))
    return out


def wanted_models(plan: Plan) -> set[str]:
    return {
        model_service_name(source.model)
        for dcd in plan.dcds
        if dcd.body["spec"]["name"] in plan.selected_names
        and (source := source_of(dcd, graph=None)).model
    }
