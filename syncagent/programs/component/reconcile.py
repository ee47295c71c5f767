"""The Component program: one DynamoComponentDeployment per component (docs/rendering.md §1).

Order of one reconcile (docs/routing.md §3): restart state -> render DCDs -> apply the discovery
identity and the DCDs -> readiness -> delete stale DCDs -> status. The DCD reconciler turns
each DCD into its Deployment or LeaderWorkerSet and Service; this program only reads their
readiness back through the DCD status.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from syncagent.api import Component
from syncagent.kube import being_deleted, controlled_by, kinds
from syncagent.kube.objects import Body
from syncagent.programs import migration, readiness, removal, status, waitleader
from syncagent.programs.base import ProgramResult
from syncagent.programs.capabilities import LWS
from syncagent.programs.checkpoint_gate import read_checkpoints
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.restart import plan_restart
from syncagent.programs.view import Obj, environment
from syncagent.render import (
    GraphLive,
    Rendered,
    component_dcd_name,
    discovery_identity,
    generate_dcds,
    graph_owner,
    graph_worker_hash,
    source_of,
)
from syncagent.render import labels as L
from syncagent.render.inputs import discovery_on
from syncagent.render.naming import dynamo_namespace
from syncagent.render.workerhash import runtime_namespace
from syncagent.ssa import owner_of

log = logging.getLogger(__name__)


class ComponentReconcile:
    """One reconcile of a graph routed to the Component pathway."""

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        components = ctx.typed.spec.components
        if any(c.is_multinode for c in components) and not ctx.caps.has(LWS):
            result = status.failed(status.NO_ORCHESTRATOR, "no multinode orchestrator available")
            return ProgramResult(build_status(ctx, result, components=_previous(ctx)))
        # Errors raised below become the status in ``programs.graph.reconcile``.
        return await self._reconcile(ctx, components)

    async def _reconcile(self, ctx: GraphContext, components: list[Component]) -> ProgramResult:
        live = self._live_dcds(ctx)
        by_name = {Body(d).meta.name: d for d in live}
        names = [c.name for c in components]
        # Worker names carry the generation upstream's operator recorded on the graph (none
        # when absent); a DCD of another name for the component is replaced (_remove_stale).
        worker_hash = graph_worker_hash(ctx.typed)
        rendered_names = {
            c.name: component_dcd_name(ctx.typed, c, worker_hash=worker_hash) for c in components
        }

        def done(component: str) -> bool:
            return readiness.dcd_done(by_name.get(rendered_names.get(component, "")))

        plan = plan_restart(
            ctx.restart,
            ctx.previous.get("restart"),
            names,
            done=done,
        )
        checkpoints = read_checkpoints(ctx.store, ctx.namespace, components)
        env = environment(
            ctx.store,
            ctx.namespace,
            discovery_backend=ctx.discovery_backend,
            checkpoints=checkpoints.ready,
            agent_account=ctx.agent_account,
        )
        graph_live = _graph_live(live, restarting=plan.annotate)
        dcds = generate_dcds(ctx.typed, live=graph_live, env=env, worker_hash=worker_hash)
        await self._apply_identity(ctx, dcds, env)
        await waitleader.sync_graph(ctx)
        latest = {d.name: await self._apply_dcd(ctx, d) for d in dcds}
        resources = [(n, readiness.dcd_readiness(obj)) for n, obj in latest.items()]
        stale = await self._remove_stale(ctx, live, rendered_names, latest)
        result = status.result_of(resources, waiting_checkpoints=checkpoints.waiting())
        built = build_status(
            ctx,
            result,
            components=_component_statuses(ctx, components, latest, rendered_names),
            restart=plan.status,
            checkpoints=checkpoints.status(),
            stale=stale,
        )
        return ProgramResult(built, list(ctx.writer.events))

    def _live_dcds(self, ctx: GraphContext) -> list[Obj]:
        return [
            d
            for d in ctx.store.list(kinds.DCD.kind, ctx.namespace, owner=ctx.uid)
            if controlled_by(d, ctx.uid)
        ]

    async def _apply_identity(self, ctx: GraphContext, dcds: list[Rendered], env: Any) -> None:
        if not any(discovery_on(source_of(d, graph=ctx.name), env) for d in dcds):
            return
        owner = owner_of(ctx.graph)
        for obj in discovery_identity(
            ctx.name, namespace=ctx.namespace, owner=graph_owner(ctx.typed)
        ):
            current = ctx.store.get(obj.kind, ctx.namespace, obj.name)
            if being_deleted(current):
                continue
            await ctx.writer.apply_owned(obj, owner=owner, live=current)

    async def _apply_dcd(self, ctx: GraphContext, dcd: Rendered) -> Obj | None:
        current = ctx.store.get(kinds.DCD.kind, ctx.namespace, dcd.name)
        if being_deleted(current):
            # A child being deleted counts as absent; it is recreated once it is gone.
            return current
        entry = await ctx.writer.apply_owned(dcd, owner=owner_of(ctx.graph), live=current)
        return entry.object

    async def _remove_stale(
        self,
        ctx: GraphContext,
        live: list[Obj],
        rendered_names: dict[str, str],
        latest: Mapping[str, Obj | None],
    ) -> list[str]:
        """Delete removed components now and renamed DCDs once replaced; name what remains."""
        stale = removal.stale_dcds(live, rendered_names=rendered_names)
        for dcd in stale.removed:
            if not being_deleted(dcd):
                await removal.delete_component(ctx.writer, ctx.store, dcd)
        waiting: list[Obj] = []
        for dcd in stale.replaced:
            component = (dcd.get("spec") or {}).get("name")
            replaced = readiness.dcd_readiness(latest.get(rendered_names[component])).ready
            waiting += await migration.retire(ctx, [dcd], when=replaced)
        return migration.describe(waiting)


def _previous(ctx: GraphContext) -> dict[str, Any] | None:
    return ctx.previous.get("components")


def _graph_live(live: list[Obj], *, restarting: frozenset[str]) -> GraphLive:
    backend, restart_at = {}, {}
    for dcd in live:
        spec = dcd.get("spec") or {}
        component = spec.get("name") or Body(dcd).meta.name
        if spec.get("backendFramework"):
            backend[component] = spec["backendFramework"]
        annotations = Body(spec.get("podTemplate")).meta.annotations
        if L.RESTART_AT in annotations:
            restart_at[component] = annotations[L.RESTART_AT]
    return GraphLive(backend=backend, restart_at=restart_at, restarting=restarting)


def _component_statuses(
    ctx: GraphContext,
    components: list[Component],
    latest: Mapping[str, Obj | None],
    rendered_names: Mapping[str, str],
) -> dict[str, dict[str, Any]]:
    """``status.components``: each DCD's reported status, zeros until it reports one."""
    out = {}
    for component in components:
        name = component.name
        dcd_name = rendered_names[name]
        reported = Body(latest.get(dcd_name)).status.get("component")
        if reported:
            out[name] = dict(reported)
            continue
        multinode = component.is_multinode
        workload = dcd_name + ("-0" if multinode else "")
        base = dynamo_namespace(
            ctx.namespace, ctx.name, global_namespace=bool(component.global_dynamo_namespace)
        )
        out[name] = {
            "componentKind": "LeaderWorkerSet" if multinode else "Deployment",
            "componentNames": [workload],
            "runtimeNamespace": runtime_namespace(
                base, component.type, graph_worker_hash(ctx.typed)
            ),
            "replicas": 0,
            "updatedReplicas": 0,
        }
    return out
