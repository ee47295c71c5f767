"""The Component pathway's part of a graph reconcile (docs/rendering.md §1, docs/routing.md §3).

The steps are :func:`syncagent.programs.skeleton.run`'s; this pathway has no root object: the
skeleton applies one DCD per component, and the DCD reconciler turns each into its Deployment
or LeaderWorkerSet and Service. Readiness comes back through the DCD status; stale DCDs go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syncagent.kube import being_deleted, controlled_by, kinds
from syncagent.kube.objects import Body
from syncagent.programs import migration, readiness, removal, skeleton, status
from syncagent.programs.base import ProgramResult
from syncagent.programs.capabilities import LWS
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.readiness import Readiness
from syncagent.programs.skeleton import Turn
from syncagent.programs.view import Obj
from syncagent.render import GraphLive, component_dcd_name, graph_worker_hash
from syncagent.render import labels as L
from syncagent.render.workerhash import runtime_namespace


@dataclass
class _Live:
    dcds: list[Obj]
    names: dict[str, str]  # component -> the DCD name it renders to now


class ComponentReconcile:
    """One reconcile of a graph routed to the Component pathway."""

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        if any(c.is_multinode for c in ctx.typed.spec.components) and not ctx.caps.has(LWS):
            result = status.failed(status.NO_ORCHESTRATOR, "no multinode orchestrator available")
            previous = ctx.previous.get("components")
            return ProgramResult(build_status(ctx, result, components=previous))
        return await skeleton.run(ctx, self)

    def read(self, turn: Turn) -> _Live:
        ctx = turn.ctx
        live = ctx.store.list(kinds.DCD.kind, ctx.namespace, owner=ctx.uid)
        # Worker names carry the generation upstream's operator recorded on the graph (none
        # when absent); a DCD of another name for the component is replaced (retire).
        turn.worker_hash = graph_worker_hash(ctx.typed)
        names = {
            c.name: component_dcd_name(ctx.typed, c, worker_hash=turn.worker_hash)
            for c in ctx.typed.spec.components
        }
        return _Live([d for d in live if controlled_by(d, ctx.uid)], names)

    def plan(self, turn: Turn, live: _Live) -> None:
        by_name = {Body(d).meta.name: d for d in live.dcds}

        def done(component: str) -> bool:
            return readiness.dcd_done(by_name.get(live.names.get(component, "")))

        turn.restart = turn.plan_restart(done)
        turn.graph_live = _graph_live(live.dcds, restarting=turn.restart.annotate)

    async def apply_root(self, turn: Turn, live: _Live) -> None:
        return None

    def applies_dcd(self, live: _Live, component: str) -> bool:
        return True

    async def settle(self, turn: Turn, live: _Live) -> list[tuple[str, Readiness]]:
        return [(n, readiness.dcd_readiness(obj)) for n, obj in turn.latest.items()]

    async def retire(self, turn: Turn, live: _Live, *, successful: bool) -> list[str]:
        """Delete removed components now and renamed DCDs once replaced; name what remains."""
        ctx = turn.ctx
        stale = removal.stale_dcds(live.dcds, rendered_names=live.names)
        for dcd in stale.removed:
            if not being_deleted(dcd):
                await removal.delete_component(ctx.writer, ctx.store, dcd)
        waiting: list[Obj] = []
        for dcd in stale.replaced:
            component = (dcd.get("spec") or {}).get("name")
            replacement = turn.latest.get(live.names[component])
            replaced = readiness.dcd_readiness(replacement).ready
            waiting += await migration.retire(ctx, [dcd], when=replaced)
        return migration.describe(waiting)

    def components(self, turn: Turn, live: _Live) -> dict[str, dict[str, Any]]:
        """``status.components``: each DCD's reported status, zeros until it reports one."""
        ctx, out = turn.ctx, {}
        for component in ctx.typed.spec.components:
            name, dcd_name = component.name, live.names[component.name]
            reported = Body(turn.latest.get(dcd_name)).status.get("component")
            if reported:
                out[name] = dict(reported)
                continue
            multinode = component.is_multinode
            base = turn.dynamo_namespace(component)
            out[name] = {
                "componentKind": "LeaderWorkerSet" if multinode else "Deployment",
                "componentNames": [dcd_name + ("-0" if multinode else "")],
                "runtimeNamespace": runtime_namespace(base, component.type, turn.worker_hash),
                "replicas": 0,
                "updatedReplicas": 0,
            }
        return out


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
