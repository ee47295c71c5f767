"""The DisaggregatedSet program (docs/disaggregatedset.md §3).

One DS holds every eligible multinode worker component as a role; every other component stays
a DCD. Order of one reconcile: selection and names -> restart state (coalesced) -> render ->
checkpoint gate -> apply the DS (template hash ``F`` from the dry run) -> apply the other DCDs ->
readiness -> Services (handoff, selectors, model Services) -> cutover (delete the selected
components' DCDs once the DS is ready) -> status; when ``successful``, stale Services and the
other pathways' objects go.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from fieldmanagers import disaggregatedset as ds_manager
from syncagent.api import Component
from syncagent.kube import being_deleted, kinds
from syncagent.kube.objects import Body
from syncagent.programs import readiness, status, waitleader
from syncagent.programs.base import ProgramResult
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.disaggregatedset import ds_readiness, services
from syncagent.programs.disaggregatedset.plan import (
    Plan,
    live_f,
    name_of,
    prepare,
    spec_name,
    uid_of,
)
from syncagent.programs.readiness import Readiness
from syncagent.programs.routing import Pathway
from syncagent.programs.view import Obj
from syncagent.render import (
    discovery_identity,
    generate_dcds,
    graph_owner,
    source_of,
)
from syncagent.render.disaggregatedset import (
    DsRender,
    ds_name,
    render_disaggregated_set,
    template_hash,
    with_template_hash,
)
from syncagent.render.inputs import discovery_on
from syncagent.render.naming import dynamo_namespace
from syncagent.ssa import ABSENT, ApplyOptions, digest, owner_of

log = logging.getLogger(__name__)

PATHWAY = Pathway.DISAGGREGATED_SET
REQUEUE_AFTER_MODIFIED = 5.0
_F_CACHE_SIZE = 4096
# digest of the desired DS without F -> F (docs/disaggregatedset.md §4 "Caching")
_F_CACHE: OrderedDict[str, str] = OrderedDict()


class DsReconcile:
    """One reconcile of a graph routed to the DisaggregatedSet pathway."""

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        """Errors raised here become the status in ``programs.graph.reconcile``."""
        plan = prepare(ctx)
        ds_obj, f_hash, modified = await self._apply_ds(ctx, plan)
        if modified and plan.replan is not None:
            # "done when the DS is ready and was not modified in this reconcile" (§6.2)
            again = plan.replan()
            plan.restart = again.status
            plan.graph_live = dataclasses.replace(plan.graph_live, restarting=again.annotate)
        await self._apply_identity(ctx, plan)
        await waitleader.sync_graph(ctx)
        latest = await self._apply_dcds(ctx, plan)
        children = ds_readiness.children_of(
            ctx.store.list("LeaderWorkerSet", ctx.namespace), uid_of(ds_obj)
        )
        sel_roles = [
            ds_readiness.SelectedRole(
                c.name, plan.roles[c.name], 0 if plan.gated else c.effective_replicas
            )
            for c in plan.selected
        ]
        ds_state = ds_readiness.ds_readiness(ds_obj, children, roles=sel_roles, f_hash=f_hash)
        ds_ready = ds_state.ready and not modified and not plan.gated
        ds_message = ds_state.reason
        if modified:
            ds_message = ds_readiness.MODIFIED_MESSAGE
        elif plan.gated:
            ds_message = ds_readiness.GATED_MESSAGE
        services_owned = await services.services(ctx, plan, ds_state.revisions, switch=ds_ready)
        await services.hand_back(ctx, plan, latest)
        await services.cutover(ctx, plan, when=ds_ready and services_owned)
        resources = [(name_of(ds_obj) or ds_name(ctx.name), Readiness(ds_ready, ds_message))]
        resources += [(n, readiness.dcd_readiness(o)) for n, o in latest.items()]
        result = status.result_of(resources, waiting_checkpoints=plan.checkpoints.waiting())
        stale = await services.cleanup(ctx, plan, latest, successful=result.ready)
        components = self._component_statuses(ctx, plan, children, f_hash, ds_obj, latest)
        built = build_status(
            ctx,
            result,
            components=components,
            restart=plan.restart,
            checkpoints=plan.checkpoints.status(),
            stale=stale,
        )
        requeue = REQUEUE_AFTER_MODIFIED if modified else None
        return ProgramResult(built, list(ctx.writer.events), requeue_after=requeue)

    # -- the DS -----------------------------------------------------------------------------

    async def _apply_ds(self, ctx: GraphContext, plan: Plan) -> tuple[Obj | None, str, bool]:
        out = render_disaggregated_set(
            ctx.typed, env=plan.env, live=plan.graph_live, gated=plan.gated
        )
        if being_deleted(plan.ds):
            return plan.ds, live_f(plan.ds), False
        f_hash = await self._template_hash(ctx, out, plan.ds)
        desired = with_template_hash(out.rendered, f_hash)
        entry = await ctx.writer.apply_owned(desired, owner=owner_of(ctx.graph), live=plan.ds)
        return entry.object, f_hash, entry.changed

    async def _template_hash(self, ctx: GraphContext, out: DsRender, live: Obj | None) -> str:
        """``F`` from the dry-run-defaulted templates, cached under the desired digest."""
        key = digest(out.rendered.body)
        cached = _F_CACHE.get(key)
        if cached is not None:
            _F_CACHE.move_to_end(key)
            return cached
        entry = await ctx.writer.engine.preview(
            out.rendered.manifest(),
            ApplyOptions(manager=ds_manager.MANAGER.name, force=True),
            live=live if live is not None else ABSENT,
        )
        value = template_hash((entry.object.get("spec") or {}).get("roles") or [])
        _F_CACHE[key] = value
        while len(_F_CACHE) > _F_CACHE_SIZE:
            _F_CACHE.popitem(last=False)
        return value

    # -- the other components -----------------------------------------------------------------

    async def _apply_identity(self, ctx: GraphContext, plan: Plan) -> None:
        plan.dcds = generate_dcds(ctx.typed, live=plan.graph_live, env=plan.env)
        if not any(discovery_on(source_of(d, graph=ctx.name), plan.env) for d in plan.dcds):
            return
        owner = owner_of(ctx.graph)
        for obj in discovery_identity(
            ctx.name, namespace=ctx.namespace, owner=graph_owner(ctx.typed)
        ):
            current = ctx.store.get(obj.kind, ctx.namespace, obj.name)
            if not being_deleted(current):
                await ctx.writer.apply_owned(obj, owner=owner, live=current)

    async def _apply_dcds(self, ctx: GraphContext, plan: Plan) -> dict[str, Obj | None]:
        latest: dict[str, Obj | None] = {}
        for dcd in plan.dcds:
            if dcd.body["spec"]["name"] in plan.selected_names:
                continue
            current = ctx.store.get(kinds.DCD.kind, ctx.namespace, dcd.name)
            if being_deleted(current):
                latest[dcd.name] = None
                continue
            entry = await ctx.writer.apply_owned(dcd, owner=owner_of(ctx.graph), live=current)
            latest[dcd.name] = entry.object
        return latest

    # -- status ---------------------------------------------------------------------------------

    def _component_statuses(
        self,
        ctx: GraphContext,
        plan: Plan,
        children: list[Obj],
        f_hash: str,
        ds_obj: Obj | None,
        latest: Mapping[str, Obj | None],
    ) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        slices = ds_readiness.slices_of(ds_obj or {})
        for component in ctx.typed.spec.components:
            name = component.name
            runtime = dynamo_namespace(
                ctx.namespace,
                ctx.name,
                global_namespace=bool(component.global_dynamo_namespace),
            )
            if name in plan.selected_names:
                sel = ds_readiness.SelectedRole(name, plan.roles[name])
                out[name] = ds_readiness.component_status(
                    sel, children, f_hash=f_hash, runtime_namespace=runtime, slices=slices
                )
                continue
            dcd = next(
                (o for n, o in latest.items() if o and spec_name(o) == name),
                None,
            )
            reported = Body(dcd).status.get("component")
            out[name] = dict(reported) if reported else _zero_status(ctx, component, runtime)
        return out


def _zero_status(ctx: GraphContext, component: Component, runtime: str) -> dict[str, Any]:
    multinode = component.is_multinode
    base = f"{ctx.name}-{component.lower_name}"
    return {
        "componentKind": "LeaderWorkerSet" if multinode else "Deployment",
        "componentNames": [base + ("-0" if multinode else "")],
        "runtimeNamespace": runtime,
        "replicas": 0,
        "updatedReplicas": 0,
    }


__all__ = ["DsReconcile"]
