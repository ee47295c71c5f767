"""The Grove program: one PodCliqueSet per graph (docs/grove.md).

Order of one reconcile: restart state -> render -> clique-set check (before any write) -> apply
the PCS -> scale writes -> discovery identity -> Services (handoff DCD -> graph at once, selector
kept until the PCS is ready) -> readiness -> once ``successful``: stale DS, then stale DCDs and
Services go -> status.
"""

from __future__ import annotations

import logging
from typing import Any

from syncagent.api import Component, is_multinode_component
from syncagent.kube import being_deleted, kinds
from syncagent.kube.objects import Body
from syncagent.programs import migration, service_cutover, status, waitleader
from syncagent.programs.base import ProgramResult
from syncagent.programs.checkpoint_gate import read_checkpoints
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.grove import scale
from syncagent.programs.grove.readiness import GroveChild, component_status, pcs_readiness
from syncagent.programs.restart import plan_restart
from syncagent.programs.routing import Pathway
from syncagent.programs.view import Obj, environment
from syncagent.render import (
    Environment,
    GraphLive,
    Rendered,
    RenderError,
    component_selector,
    discovery_identity,
    generate_dcds,
    graph_owner,
    model_service,
    source_of,
)
from syncagent.render import labels as L
from syncagent.render.grove import (
    child_name,
    clique_set_change,
    grove_component_service,
    live_template_replicas,
    pcs_name,
    render_pod_clique_set,
)
from syncagent.render.grove_startup import live_fixed
from syncagent.render.inputs import discovery_on
from syncagent.render.naming import component_service_name, dynamo_namespace, model_service_name
from syncagent.render.services import wants_component_service
from syncagent.ssa import owner_of

log = logging.getLogger(__name__)

PCS = kinds.POD_CLIQUE_SET
PATHWAY = Pathway.GROVE


class _CliqueSetChanged(RenderError):
    """A PodCliqueSet change Grove would refuse: reported as a graph it cannot render."""


class GroveReconcile:
    """One reconcile of a graph routed to the Grove pathway."""

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        """Errors raised here become the status in ``programs.graph.reconcile``."""
        components = ctx.typed.spec.components
        live_pcs = self._live_pcs(ctx)
        checkpoints = read_checkpoints(ctx.store, ctx.namespace, components)
        env = environment(
            ctx.store,
            ctx.namespace,
            discovery_backend=ctx.discovery_backend,
            checkpoints=checkpoints.ready,
            agent_account=ctx.agent_account,
        )
        name = pcs_name(ctx.name, components)
        children = self._children(ctx, components, name, env)

        def done(_component: str) -> bool:
            return pcs_readiness(live_pcs, children).ready

        restart = plan_restart(
            ctx.restart,
            ctx.previous.get("restart"),
            [c.name for c in components],
            done=done,
        )
        graph_live = GraphLive(restart_at=_restart_values(live_pcs), restarting=restart.annotate)
        rendered = render_pod_clique_set(
            ctx.typed,
            env=env,
            live=graph_live,
            live_replicas=live_template_replicas(live_pcs),
            fixed=live_fixed(live_pcs),
        )
        refusal = clique_set_change(rendered, live_pcs)
        if refusal:
            raise _CliqueSetChanged(refusal)
        entry = await ctx.writer.apply_owned(rendered, owner=owner_of(ctx.graph), live=live_pcs)
        pcs = entry.object
        for child, obj in children:
            if scale.needs_scale(obj, child.desired):
                await scale.patch_scale(ctx.writer, obj or {}, child.desired)
        dcds = generate_dcds(ctx.typed, live=graph_live, env=env)
        await self._identity(ctx, dcds, env)
        await waitleader.sync_graph(ctx)
        ready_state = pcs_readiness(pcs, children)
        await self._services(ctx, dcds, env, switch=ready_state.ready)
        result = status.result_of(
            [(rendered.name, ready_state)], waiting_checkpoints=checkpoints.waiting()
        )
        stale = await self._cleanup(ctx, dcds, env, successful=result.ready, keep=rendered.name)
        built = build_status(
            ctx,
            result,
            components=_component_statuses(ctx, components, children),
            restart=restart.status,
            checkpoints=checkpoints.status(),
            stale=stale,
        )
        return ProgramResult(built, list(ctx.writer.events))

    def _live_pcs(self, ctx: GraphContext) -> Obj | None:
        """Found through this graph's controller reference: the name follows the components."""
        mine = migration.owned(ctx.store, PCS.kind, ctx.namespace, ctx.uid)
        name = pcs_name(ctx.name, ctx.typed.spec.components)
        by_name = ctx.store.get(PCS.kind, ctx.namespace, name)
        if by_name is not None and by_name not in mine:
            stub = Rendered("", PCS.api_version, PCS.kind, name, ctx.namespace, body={})
            ctx.writer.check_may_control(stub, by_name, owner_of(ctx.graph))
            return by_name
        return mine[0] if mine else None

    def _children(
        self, ctx: GraphContext, components: list[Component], pcs: str, env: Environment
    ) -> list[tuple[GroveChild, Obj | None]]:
        sources = {d.body["spec"]["name"]: d for d in generate_dcds(ctx.typed, env=env)}
        out = []
        for component in components:
            spec = sources[component.name].body["spec"]
            multinode = is_multinode_component(spec)
            kind = "PodCliqueScalingGroup" if multinode else "PodClique"
            name = child_name(pcs, component.name)
            desired = 1 if spec.get("replicas") is None else int(spec["replicas"])
            child = GroveChild(component.name, kind, name, desired)
            out.append((child, ctx.store.get(kind, ctx.namespace, name)))
        return out

    async def _identity(self, ctx: GraphContext, dcds: list[Rendered], env: Environment) -> None:
        if not any(discovery_on(source_of(d, graph=ctx.name), env) for d in dcds):
            return
        owner = owner_of(ctx.graph)
        for obj in discovery_identity(
            ctx.name, namespace=ctx.namespace, owner=graph_owner(ctx.typed)
        ):
            current = ctx.store.get(obj.kind, ctx.namespace, obj.name)
            if not being_deleted(current):
                await ctx.writer.apply_owned(obj, owner=owner, live=current)

    async def _services(
        self, ctx: GraphContext, dcds: list[Rendered], env: Environment, *, switch: bool
    ) -> None:
        graph = owner_of(ctx.graph)
        our_dcds = {
            Body(d).meta.uid
            for d in migration.owned(ctx.store, kinds.DCD.kind, ctx.namespace, ctx.uid)
        }
        models: dict[str, Rendered] = {}
        for dcd in dcds:
            source = source_of(dcd, graph=ctx.name)
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
            if source.model and source.model not in models:
                models[source.model] = model_service(
                    source.model, namespace=ctx.namespace, owner=graph_owner(ctx.typed)
                )
        for rendered in models.values():
            await service_cutover.ensure_model_service(
                ctx.writer, ctx.store, rendered, graph=graph, take_from=our_dcds
            )

    async def _cleanup(
        self,
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


def _restart_values(pcs: Obj | None) -> dict[str, str]:
    """Component -> live ``restartAt`` from the PCS cliques, so other components do not roll."""
    out: dict[str, str] = {}
    template = ((pcs or {}).get("spec") or {}).get("template") or {}
    for clique in template.get("cliques") or ():
        annotations = clique.get("annotations") or {}
        component = (clique.get("labels") or {}).get(L.COMPONENT)
        if component and L.RESTART_AT in annotations:
            out.setdefault(str(component), str(annotations[L.RESTART_AT]))
    return out


def _component_statuses(
    ctx: GraphContext,
    components: list[Component],
    children: list[tuple[GroveChild, Obj | None]],
) -> dict[str, dict[str, Any]]:
    runtime = {
        c.name: dynamo_namespace(
            ctx.namespace, ctx.name, global_namespace=bool(c.global_dynamo_namespace)
        )
        for c in components
    }
    return {
        child.component: component_status(child, obj, runtime_namespace=runtime[child.component])
        for child, obj in children
    }


__all__ = ["GroveReconcile"]
