"""The DisaggregatedSet program (spec/disaggregatedset.md §3.1).

One DS holds every eligible multinode worker component as a role; every other component stays
a DCD. Order of one reconcile: selection and names -> restart state (coalesced) -> render ->
checkpoint gate -> apply the DS (template hash ``F`` from the dry run) -> apply the other DCDs ->
readiness -> Services (handoff, selectors, model Services) -> cutover (delete the selected
components' DCDs once the DS is ready) -> status; when ``successful``, stale Services and the
other pathways' objects go.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fieldmanagers import disaggregatedset as ds_manager
from syncagent.api import is_multinode_component
from syncagent.programs import (
    ds_readiness,
    migration,
    readiness,
    service_cutover,
    status,
    waitleader,
)
from syncagent.programs.base import ProgramResult
from syncagent.programs.checkpoint_gate import Checkpoints, read_checkpoints
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.readiness import Readiness
from syncagent.programs.restart import RestartPlan
from syncagent.programs.restart_coalescing import (
    plan_ds_restart,
    restart_values_from_ds,
    restart_visible,
)
from syncagent.programs.view import Obj, being_deleted, environment
from syncagent.programs.writes import RefusedError
from syncagent.render import (
    Environment,
    GraphLive,
    Rendered,
    RenderError,
    component_service,
    discovery_identity,
    generate_dcds,
    graph_owner,
    leader_worker_set,
    model_service,
    render_component,
    source_of,
)
from syncagent.render import labels as L
from syncagent.render.disaggregatedset import (
    API_VERSION,
    TEMPLATE_HASH,
    DsRender,
    ds_name,
    pending_selector,
    render_disaggregated_set,
    role_names,
    selected_components,
    service_selector,
    template_hash,
    with_template_hash,
)
from syncagent.render.inputs import discovery_on
from syncagent.render.model import build
from syncagent.render.naming import component_service_name, dynamo_namespace, model_service_name
from syncagent.render.services import wants_component_service
from syncagent.ssa import ABSENT, ApplyOptions, SsaError, digest, owner_of

log = logging.getLogger(__name__)

DS = "DisaggregatedSet"
DCD = "DynamoComponentDeployment"
PATHWAY = "DisaggregatedSet"
REQUEUE_AFTER_MODIFIED = 5.0
_F_CACHE_SIZE = 4096
# digest of the desired DS without F -> F (disaggregatedset.md §4.1 "Caching")
_F_CACHE: OrderedDict[str, str] = OrderedDict()


def _components(graph: Obj) -> list[dict[str, Any]]:
    return list((graph.get("spec") or {}).get("components") or [])


@dataclass
class _Plan:
    """What one reconcile works with, gathered before any write."""

    selected: list[Mapping[str, Any]]
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
        return [str(c["name"]) for c in self.selected]


class DisaggregatedSetProgram:
    """Reconciles a graph routed to the DisaggregatedSet pathway."""

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        try:
            return await self._reconcile(ctx)
        except RefusedError as err:
            return _failed(ctx, err.message, refused=True)
        except RenderError as err:
            return _failed(ctx, err.message)
        except SsaError as err:
            return _failed(ctx, str(err))

    async def _reconcile(self, ctx: GraphContext) -> ProgramResult:
        plan = self._prepare(ctx)
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
            ctx.store.list("LeaderWorkerSet", ctx.namespace), _uid(ds_obj)
        )
        sel_roles = [
            ds_readiness.SelectedRole(
                str(c["name"]),
                plan.roles[str(c["name"])],
                0 if plan.gated else _replicas(c),
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
        services_owned = await self._services(ctx, plan, ds_state.revisions, switch=ds_ready)
        await self._hand_back(ctx, plan, latest)
        if ds_ready and services_owned:
            await self._cutover(ctx, plan)
        resources = [(_name(ds_obj) or ds_name(ctx.name), Readiness(ds_ready, ds_message))]
        resources += [(n, readiness.dcd_readiness(o)) for n, o in latest.items()]
        result = status.result_of(resources, waiting_checkpoints=plan.checkpoints.waiting())
        stale = await self._cleanup(ctx, plan, latest, successful=result.ready)
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

    # -- preparation ------------------------------------------------------------------------

    def _prepare(self, ctx: GraphContext) -> _Plan:
        components = _components(ctx.graph)
        selected = selected_components(components)
        name = ds_name(ctx.name)
        ds = ctx.store.get(DS, ctx.namespace, name)
        graph_ref = owner_of(ctx.graph)
        if ds is not None:
            ctx.writer.check_may_control(_stub(name, ctx.namespace), ds, graph_ref)
        roles = role_names(selected)
        live_dcds = migration.owned(ctx.store, DCD, ctx.namespace, ctx.uid)
        checkpoints = read_checkpoints(ctx.store, ctx.namespace, components)
        selected_names = [str(c["name"]) for c in selected]
        f_live = _live_f(ds)
        children = ds_readiness.children_of(
            ctx.store.list("LeaderWorkerSet", ctx.namespace), _uid(ds)
        )
        by_dcd = {_spec_name(d): d for d in live_dcds}

        restart_id = str(((ctx.graph.get("spec") or {}).get("restart") or {}).get("id") or "")
        gated = checkpoints.gated(selected_names)

        def done(component: str) -> bool:
            if component in selected_names:
                # A gated DS has rolled nothing, and a DS view without this restart's value
                # predates its write (the watch cache lags): its ready children are old pods.
                if gated or not restart_visible(ds, roles, component, restart_id):
                    return False
                state = ds_readiness.ds_readiness(
                    ds,
                    children,
                    roles=[
                        ds_readiness.SelectedRole(
                            str(c["name"]), roles[str(c["name"])], _replicas(c)
                        )
                        for c in selected
                    ],
                    f_hash=f_live,
                )
                return state.ready
            return readiness.dcd_done(by_dcd.get(component))

        def restart_plan(*, ds_done: bool) -> RestartPlan:
            return plan_ds_restart(
                (ctx.graph.get("spec") or {}).get("restart"),
                ctx.previous.get("restart"),
                [str(c["name"]) for c in components],
                selected=selected_names,
                done=lambda c: done(c) and (ds_done or c not in selected_names),
            )

        restart = restart_plan(ds_done=True)
        env = environment(
            ctx.store,
            ctx.namespace,
            discovery_backend=ctx.discovery_backend,
            checkpoints=checkpoints.ready,
        )
        restart_at = {**_dcd_restart_values(live_dcds), **restart_values_from_ds(ds, roles)}
        backend = {
            _spec_name(d): str((d.get("spec") or {}).get("backendFramework"))
            for d in live_dcds
            if (d.get("spec") or {}).get("backendFramework")
        }
        graph_live = GraphLive(backend=backend, restart_at=restart_at, restarting=restart.annotate)
        return _Plan(
            selected=selected,
            roles=roles,
            live_dcds=live_dcds,
            ds=ds,
            checkpoints=checkpoints,
            env=env,
            graph_live=graph_live,
            restart=restart.status,
            gated=gated,
            replan=functools.partial(restart_plan, ds_done=False),
        )

    # -- the DS -----------------------------------------------------------------------------

    async def _apply_ds(self, ctx: GraphContext, plan: _Plan) -> tuple[Obj | None, str, bool]:
        out = render_disaggregated_set(
            ctx.graph, env=plan.env, live=plan.graph_live, gated=plan.gated
        )
        if being_deleted(plan.ds):
            return plan.ds, _live_f(plan.ds), False
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
        entry = await ctx.writer.engine.plan(
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

    async def _apply_identity(self, ctx: GraphContext, plan: _Plan) -> None:
        plan.dcds = generate_dcds(ctx.graph, live=plan.graph_live, env=plan.env)
        if not any(discovery_on(source_of(d, graph=ctx.name), plan.env) for d in plan.dcds):
            return
        owner = owner_of(ctx.graph)
        for obj in discovery_identity(
            ctx.name, namespace=ctx.namespace, owner=graph_owner(ctx.graph)
        ):
            current = ctx.store.get(obj.kind, ctx.namespace, obj.name)
            if not being_deleted(current):
                await ctx.writer.apply_owned(obj, owner=owner, live=current)

    async def _apply_dcds(self, ctx: GraphContext, plan: _Plan) -> dict[str, Obj | None]:
        latest: dict[str, Obj | None] = {}
        for dcd in plan.dcds:
            if dcd.body["spec"]["name"] in plan.selected_names:
                continue
            current = ctx.store.get(DCD, ctx.namespace, dcd.name)
            if being_deleted(current):
                latest[dcd.name] = None
                continue
            entry = await ctx.writer.apply_owned(dcd, owner=owner_of(ctx.graph), live=current)
            latest[dcd.name] = entry.object
        return latest

    # -- Services -----------------------------------------------------------------------------

    async def _services(
        self,
        ctx: GraphContext,
        plan: _Plan,
        revisions: Mapping[str, str | None],
        *,
        switch: bool,
    ) -> bool:
        """Services of selected components and their models; whether all are the graph's."""
        graph = owner_of(ctx.graph)
        our_dcds = {str((d.get("metadata") or {}).get("uid")) for d in plan.live_dcds}
        selected_dcds = {
            str((d.get("metadata") or {}).get("uid"))
            for d in plan.live_dcds
            if _spec_name(d) in plan.selected_names
        }
        owned = True
        models: dict[str, Rendered] = {}
        for dcd in plan.dcds:
            component = dcd.body["spec"]["name"]
            if component not in plan.selected_names:
                continue
            source = source_of(dcd, graph=ctx.name)
            if wants_component_service(source, plan.env):
                rendered = component_service(
                    source,
                    workload=leader_worker_set(source, env=plan.env),
                    owner=graph_owner(ctx.graph),
                )
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
            if source.model and source.model not in models:
                models[source.model] = model_service(
                    source.model, namespace=ctx.namespace, owner=graph_owner(ctx.graph)
                )
        for rendered in models.values():
            await service_cutover.ensure_model_service(
                ctx.writer, ctx.store, rendered, graph=graph, take_from=selected_dcds
            )
        return owned

    async def _hand_back(
        self, ctx: GraphContext, plan: _Plan, latest: Mapping[str, Obj | None]
    ) -> None:
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

    # -- cutover and cleanup --------------------------------------------------------------------

    async def _cutover(self, ctx: GraphContext, plan: _Plan) -> None:
        for dcd in plan.live_dcds:
            if _spec_name(dcd) in plan.selected_names:
                await migration.delete_stale(ctx.writer, ctx.store, dcd, pathway=PATHWAY)
                plan.deleted.add(_name(dcd))

    async def _cleanup(
        self,
        ctx: GraphContext,
        plan: _Plan,
        latest: Mapping[str, Obj | None],
        *,
        successful: bool,
    ) -> list[str]:
        """Delete removed components now; other pathways' objects once ``successful``."""
        keep = set(latest)
        remaining: list[Obj] = []
        for dcd in migration.stale_dcds(ctx.store, ctx.namespace, ctx.uid, keep=keep):
            component = _spec_name(dcd)
            if _name(dcd) in plan.deleted:
                continue
            if component in plan.selected_names:
                remaining.append(dcd)  # the cutover deletes it once the DS is ready
            elif component not in {str(c["name"]) for c in _components(ctx.graph)} or successful:
                await migration.delete_stale(ctx.writer, ctx.store, dcd, pathway=PATHWAY)
            else:
                remaining.append(dcd)
        others = migration.stale_pcs(ctx.store, ctx.namespace, ctx.uid) + migration.stale_ds(
            ctx.store, ctx.namespace, ctx.uid, keep=ds_name(ctx.name)
        )
        if not successful:
            return migration.describe(remaining + others)
        for obj in others:
            await migration.delete_stale(ctx.writer, ctx.store, obj, pathway=PATHWAY)
        await service_cutover.delete_stale_services(
            ctx.writer,
            ctx.store,
            namespace=ctx.namespace,
            graph=owner_of(ctx.graph),
            keep=self._wanted_services(ctx, plan),
            keep_models=self._wanted_models(plan),
        )
        return migration.describe([d for d in remaining if not being_deleted(d)])

    def _wanted_services(self, ctx: GraphContext, plan: _Plan) -> set[str]:
        out = set()
        for dcd in plan.dcds:
            source = source_of(dcd, graph=ctx.name)
            if wants_component_service(source, plan.env):
                out.add(component_service_name(dcd.name))
        return out

    def _wanted_models(self, plan: _Plan) -> set[str]:
        return {
            model_service_name(source.model)
            for dcd in plan.dcds
            if dcd.body["spec"]["name"] in plan.selected_names
            and (source := source_of(dcd, graph=None)).model
        }

    # -- status ---------------------------------------------------------------------------------

    def _component_statuses(
        self,
        ctx: GraphContext,
        plan: _Plan,
        children: list[Obj],
        f_hash: str,
        ds_obj: Obj | None,
        latest: Mapping[str, Obj | None],
    ) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        slices = ds_readiness.slices_of(ds_obj or {})
        for component in _components(ctx.graph):
            name = str(component["name"])
            runtime = dynamo_namespace(
                ctx.namespace,
                ctx.name,
                global_namespace=bool(component.get("globalDynamoNamespace")),
            )
            if name in plan.selected_names:
                sel = ds_readiness.SelectedRole(name, plan.roles[name])
                out[name] = ds_readiness.component_status(
                    sel, children, f_hash=f_hash, runtime_namespace=runtime, slices=slices
                )
                continue
            dcd = next(
                (o for n, o in latest.items() if o and _spec_name(o) == name),
                None,
            )
            reported = ((dcd or {}).get("status") or {}).get("component")
            out[name] = dict(reported) if reported else _zero_status(ctx, component, runtime)
        return out


def _zero_status(ctx: GraphContext, component: Mapping[str, Any], runtime: str) -> dict[str, Any]:
    multinode = is_multinode_component(component)
    base = f"{ctx.name}-{str(component['name']).lower()}"
    return {
        "componentKind": "LeaderWorkerSet" if multinode else "Deployment",
        "componentNames": [base + ("-0" if multinode else "")],
        "runtimeNamespace": runtime,
        "replicas": 0,
        "updatedReplicas": 0,
    }


def _failed(ctx: GraphContext, message: str, *, refused: bool = False) -> ProgramResult:
    log.warning("reconcile failed", extra={"object": ctx.ref, "error": message})
    result = status.failed(status.RECONCILE_FAILED, message)
    built = build_status(ctx, result, components=ctx.previous.get("components"))
    return ProgramResult(built, list(ctx.writer.events), retry=True, refused=refused)


def _replicas(component: Mapping[str, Any]) -> int:
    value = component.get("replicas")
    return 1 if value is None else int(value)


def _uid(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("uid") or "")


def _name(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("name") or "")


def _spec_name(dcd: Obj) -> str:
    return str((dcd.get("spec") or {}).get("name") or (dcd.get("metadata") or {}).get("name"))


def _stub(name: str, namespace: str) -> Rendered:
    return build(
        manager=ds_manager.MANAGER.name,
        api_version=API_VERSION,
        kind=DS,
        name=name,
        namespace=namespace,
    )


def _live_f(ds: Obj | None) -> str:
    for role in ((ds or {}).get("spec") or {}).get("roles") or ():
        value = ((role.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_HASH)
        if value:
            return str(value)
    return ""


def _dcd_restart_values(dcds: list[Obj]) -> dict[str, str]:
    out = {}
    for dcd in dcds:
        template = (dcd.get("spec") or {}).get("podTemplate") or {}
        annotations = (template.get("metadata") or {}).get("annotations") or {}
        if L.RESTART_AT in annotations:
            out[_spec_name(dcd)] = str(annotations[L.RESTART_AT])
    return out


__all__ = ["DisaggregatedSetProgram"]
