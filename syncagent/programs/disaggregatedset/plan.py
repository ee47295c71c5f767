"""What one DisaggregatedSet reconcile works with, gathered before any write
(docs/disaggregatedset.md §4-5): the selected roles, the live DS and DCDs, checkpoints, the
restart plan and the environment; and small readers of those live objects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from syncagent.api import Component
from syncagent.kube import kinds
from syncagent.kube.objects import Body
from syncagent.programs import migration, readiness
from syncagent.programs.checkpoint_gate import Checkpoints
from syncagent.programs.context import GraphContext
from syncagent.programs.disaggregatedset import ds_readiness
from syncagent.programs.disaggregatedset import field_managers as ds_manager
from syncagent.programs.disaggregatedset.render import (
    API_VERSION,
    TEMPLATE_HASH,
    ds_name,
    role_names,
    selected_components,
)
from syncagent.programs.disaggregatedset.restart_coalescing import (
    plan_ds_restart,
    restart_values_from_ds,
    restart_visible,
)
from syncagent.programs.restart import RestartPlan
from syncagent.programs.view import Obj
from syncagent.render import Environment, GraphLive, Rendered
from syncagent.render import labels as L
from syncagent.render.model import build
from syncagent.ssa import owner_of

DS = "DisaggregatedSet"


@dataclass
class Plan:
    """What one reconcile works with, gathered before any write."""

    selected: list[Component]
    roles: dict[str, str]
    live_dcds: list[Obj]
    ds: Obj | None
    checkpoints: Checkpoints
    env: Environment
    graph_live: GraphLive
    restart: dict[str, Any] | None
    gated: bool
    # The restart state again, with the DS not done (this reconcile modified it).
    replan: Callable[[], RestartPlan] | None = None
    dcds: list[Rendered] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)

    @property
    def selected_names(self) -> list[str]:
        return [c.name for c in self.selected]


def prepare(ctx: GraphContext, checkpoints: Checkpoints, env: Environment) -> Plan:
    components = ctx.typed.spec.components
    selected = selected_components(components)
    name = ds_name(ctx.name)
    ds = ctx.store.get(DS, ctx.namespace, name)
    graph_ref = owner_of(ctx.graph)
    if ds is not None:
        ctx.writer.check_may_control(stub(name, ctx.namespace), ds, graph_ref)
    roles = role_names(selected)
    live_dcds = migration.owned(ctx.store, kinds.DCD.kind, ctx.namespace, ctx.uid)
    selected_names = [c.name for c in selected]
    gated = checkpoints.gated(selected_names)
    restart_plan = _restart(
        ctx, components, selected, roles, ds=ds, live_dcds=live_dcds, gated=gated
    )
    restart = restart_plan(ds_done=True)
    restart_at = {**dcd_restart_values(live_dcds), **restart_values_from_ds(ds, roles)}
    backend = {
        spec_name(d): str((d.get("spec") or {}).get("backendFramework"))
        for d in live_dcds
        if (d.get("spec") or {}).get("backendFramework")
    }
    graph_live = GraphLive(backend=backend, restart_at=restart_at, restarting=restart.annotate)
    return Plan(
        selected=selected,
        roles=roles,
        live_dcds=live_dcds,
        ds=ds,
        checkpoints=checkpoints,
        env=env,
        graph_live=graph_live,
        restart=restart.status,
        gated=gated,
        replan=lambda: restart_plan(ds_done=False),
    )


def _restart(
    ctx: GraphContext,
    components: list[Component],
    selected: list[Component],
    roles: dict[str, str],
    *,
    ds: Obj | None,
    live_dcds: list[Obj],
    gated: bool,
) -> Callable[..., RestartPlan]:
    """The restart plan (restart.md): a selected component is done when the live DS is ready,
    any other when its DCD is. ``ds_done=False`` plans again as if the DS were not ready (this
    reconcile modified it)."""
    selected_names = [c.name for c in selected]
    f_live = live_f(ds)
    children = ds_readiness.children_of(
        ctx.store.list("LeaderWorkerSet", ctx.namespace), uid_of(ds)
    )
    by_dcd = {spec_name(d): d for d in live_dcds}
    role_list = [
        ds_readiness.SelectedRole(c.name, roles[c.name], c.effective_replicas) for c in selected
    ]

    restart_id = ctx.restart.id if ctx.restart is not None else ""

    def done(component: str) -> bool:
        if component in selected_names:
            # A gated DS has rolled nothing, and a DS view without this restart's value
            # predates its write (the watch cache lags): its ready children are old pods.
            if gated or not restart_visible(ds, roles, component, restart_id):
                return False
            state = ds_readiness.ds_readiness(ds, children, roles=role_list, f_hash=f_live)
            return state.ready
        return readiness.dcd_done(by_dcd.get(component))

    def restart_plan(*, ds_done: bool) -> RestartPlan:
        return plan_ds_restart(
            ctx.restart,
            ctx.previous.get("restart"),
            [c.name for c in components],
            selected=selected_names,
            done=lambda c: done(c) and (ds_done or c not in selected_names),
        )

    return restart_plan


def uid_of(obj: Obj | None) -> str:
    return Body(obj).meta.uid


def name_of(obj: Obj | None) -> str:
    return Body(obj).meta.name


def spec_name(dcd: Obj) -> str:
    view = Body(dcd)
    return str(view.spec.get("name") or view.meta.name)


def stub(name: str, namespace: str) -> Rendered:
    return build(
        manager=ds_manager.MANAGER.name,
        api_version=API_VERSION,
        kind=DS,
        name=name,
        namespace=namespace,
    )


def live_f(ds: Obj | None) -> str:
    for role in Body(ds).spec.get("roles") or ():
        value = Body(role).meta.annotations.get(TEMPLATE_HASH)
        if value:
            return str(value)
    return ""


def dcd_restart_values(dcds: list[Obj]) -> dict[str, str]:
    out = {}
    for dcd in dcds:
        annotations = Body(Body(dcd).spec.get("podTemplate")).meta.annotations
        if L.RESTART_AT in annotations:
            out[spec_name(dcd)] = str(annotations[L.RESTART_AT])
    return out
