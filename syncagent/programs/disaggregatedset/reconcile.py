"""The DisaggregatedSet pathway's part of a graph reconcile (docs/disaggregatedset.md §3).

One DS holds every eligible multinode worker component as a role; every other component stays
a DCD (applied by :func:`syncagent.programs.skeleton.run`). Here: selection, names and the
coalesced restart state (:mod:`.plan`) -> the DS (template hash ``F`` from the dry run) ->
readiness -> Services (handoff, selectors, model Services) -> cutover (delete the selected
components' DCDs once the DS is ready); when ``successful``, stale Services and the other
pathways' objects go (:mod:`.services`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from syncagent.api import Component
from syncagent.kube import being_deleted
from syncagent.kube.objects import Body
from syncagent.programs import readiness, skeleton
from syncagent.programs.base import ProgramResult
from syncagent.programs.context import GraphContext
from syncagent.programs.disaggregatedset import ds_readiness, ds_services
from syncagent.programs.disaggregatedset.plan import (
    Plan,
    live_f,
    name_of,
    prepare,
    spec_name,
    uid_of,
)
from syncagent.programs.disaggregatedset.render import (
    ds_name,
    render_disaggregated_set,
    with_template_hash,
)
from syncagent.programs.disaggregatedset.template_hashes import TemplateHashes
from syncagent.programs.readiness import Readiness
from syncagent.programs.restart import RestartPlan
from syncagent.programs.skeleton import Turn
from syncagent.programs.view import Obj
from syncagent.ssa import owner_of

REQUEUE_AFTER_MODIFIED = 5.0


@dataclass
class _Live:
    plan: Plan
    ds: Obj | None = None  # as applied
    f_hash: str = ""
    modified: bool = False
    latest: dict[str, Obj | None] = field(default_factory=dict)  # None: being deleted
    children: list[Obj] = field(default_factory=list)


class DsReconcile:
    """One reconcile of a graph routed to the DisaggregatedSet pathway (:func:`skeleton.run`'s
    steps); ``hashes``: the program's remembered template hashes."""

    def __init__(self, hashes: TemplateHashes) -> None:
        self._hashes = hashes

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        return await skeleton.run(ctx, self)

    def read(self, turn: Turn) -> _Live:
        return _Live(prepare(turn.ctx, turn.checkpoints, turn.env))

    def plan(self, turn: Turn, live: _Live) -> None:
        turn.graph_live = live.plan.graph_live
        turn.restart = RestartPlan(live.plan.restart, turn.graph_live.restarting)

    async def apply_root(self, turn: Turn, live: _Live) -> None:
        """The DS, its template hash ``F`` from the dry run; the restart planned again when
        this apply modified it."""
        ctx, plan = turn.ctx, live.plan
        out = render_disaggregated_set(
            ctx.typed, env=turn.env, live=turn.graph_live, gated=plan.gated
        )
        if being_deleted(plan.ds):
            live.ds, live.f_hash = plan.ds, live_f(plan.ds)
            return
        live.f_hash = await self._hashes.of(ctx.writer, out, live=plan.ds)
        desired = with_template_hash(out.rendered, live.f_hash)
        entry = await ctx.writer.apply_owned(desired, owner=owner_of(ctx.graph), live=plan.ds)
        live.ds, live.modified = entry.object, entry.changed
        if live.modified:
            turn.requeue_after = REQUEUE_AFTER_MODIFIED
        if live.modified and plan.replan is not None:
            # "done when the DS is ready and was not modified in this reconcile" (§6.2)
            turn.restart = plan.replan()
            turn.graph_live = dataclasses.replace(turn.graph_live, restarting=turn.restart.annotate)

    def applies_dcd(self, live: _Live, component: str) -> bool:
        return component not in live.plan.selected_names

    async def settle(self, turn: Turn, live: _Live) -> list[tuple[str, Readiness]]:
        """The DS's readiness, then its Services, the hand-back and the cutover."""
        ctx, plan = turn.ctx, live.plan
        plan.dcds = turn.dcds
        live.latest = {n: None if n in turn.deleting else o for n, o in turn.latest.items()}
        lws = ctx.store.list("LeaderWorkerSet", ctx.namespace)
        live.children = ds_readiness.children_of(lws, uid_of(live.ds))
        sel_roles = [
            ds_readiness.SelectedRole(
                c.name, plan.roles[c.name], 0 if plan.gated else c.effective_replicas
            )
            for c in plan.selected
        ]
        ds_state = ds_readiness.ds_readiness(
            live.ds, live.children, roles=sel_roles, f_hash=live.f_hash
        )
        ds_ready = ds_state.ready and not live.modified and not plan.gated
        ds_message = ds_state.reason
        if live.modified:
            ds_message = ds_readiness.MODIFIED_MESSAGE
        elif plan.gated:
            ds_message = ds_readiness.GATED_MESSAGE
        services_owned = await ds_services.services(ctx, plan, ds_state.revisions, switch=ds_ready)
        await ds_services.hand_back(ctx, plan, live.latest)
        await ds_services.cutover(ctx, plan, when=ds_ready and services_owned)
        resources = [(name_of(live.ds) or ds_name(ctx.name), Readiness(ds_ready, ds_message))]
        return resources + [(n, readiness.dcd_readiness(o)) for n, o in live.latest.items()]

    async def retire(self, turn: Turn, live: _Live, *, successful: bool) -> list[str]:
        return await ds_services.cleanup(turn.ctx, live.plan, live.latest, successful=successful)

    def components(self, turn: Turn, live: _Live) -> dict[str, dict[str, Any]]:
        """A selected component from the DS's children, any other from its DCD."""
        ctx, plan, out = turn.ctx, live.plan, {}
        slices = ds_readiness.slices_of(live.ds or {})
        for component in ctx.typed.spec.components:
            name = component.name
            runtime = turn.dynamo_namespace(component)
            if name in plan.selected_names:
                sel = ds_readiness.SelectedRole(name, plan.roles[name])
                out[name] = ds_readiness.component_status(
                    sel, live.children, f_hash=live.f_hash, runtime_namespace=runtime, slices=slices
                )
                continue
            dcd = next((o for o in live.latest.values() if o and spec_name(o) == name), None)
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
