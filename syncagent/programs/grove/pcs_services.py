"""Services of a Grove graph and the cleanup of what it no longer needs (docs/grove.md): the
handoff DCD -> graph at once, the selector kept until the PCS is ready; once ``successful``, the
other pathways' objects, then stale DCDs and Services go."""

from __future__ import annotations

from syncagent.kube import kinds
from syncagent.kube.objects import Body
from syncagent.programs import migration, service_cutover
from syncagent.programs.context import GraphContext
from syncagent.programs.grove.render import grove_component_service
from syncagent.programs.grove.routing import PATHWAY
from syncagent.render import (
    Environment,
    Rendered,
    component_selector,
    source_of,
)
from syncagent.render.naming import component_service_name, model_service_name
from syncagent.render.services import wants_component_service
from syncagent.ssa import owner_of

PCS = kinds.POD_CLIQUE_SET


async def services(
    ctx: GraphContext, dcds: list[Rendered], env: Environment, *, switch: bool
) -> None:
    graph = owner_of(ctx.graph)
    our_dcds = {
        Body(d).meta.uid for d in migration.owned(ctx.store, kinds.DCD.kind, ctx.namespace, ctx.uid)
    }
    sources = [source_of(dcd, graph=ctx.name) for dcd in dcds]
    for source in sources:
        if wants_component_service(source, env):
            rendered = grove_component_service(ctx.typed, source, env=env)
            await service_cutover.ensure_component_service(
                ctx.writer,
                ctx.store,
                rendered,
                graph=graph,
                target=component_selector(source),
                switch=switch,
                our_dcds=our_dcds,
            )
    await service_cutover.ensure_model_services(ctx, sources, take_from=our_dcds)


async def cleanup(
    ctx: GraphContext,
    dcds: list[Rendered],
    env: Environment,
    *,
    successful: bool,
    keep: str,
) -> list[str]:
    """Stale DS first, then every DCD, then Services; only once ``successful``."""
    stale = migration.other_pathways(ctx, PATHWAY) + migration.stale_own(ctx, PCS, keep={keep})
    waiting = await migration.retire(ctx, stale, when=successful)
    if not successful:
        return migration.describe(waiting)
    wanted = {
        component_service_name(d.name)
        for d in dcds
        if wants_component_service(source_of(d, graph=ctx.name), env)
    }
    models = {model_service_name(m) for d in dcds if (m := source_of(d, graph=None).model)}
    await service_cutover.delete_stale_services(
        ctx.writer,
        ctx.store,
        namespace=ctx.namespace,
        graph=owner_of(ctx.graph),
        keep=wanted,
        keep_models=models,
    )
    return []
