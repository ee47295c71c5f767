"""One DCD -> its Deployment or LeaderWorkerSet, component Service and model Service.

Order (docs/routing.md §3): apply the workload -> readiness -> Service work (selector timing) ->
delete a workload of the other kind once the new one is ready -> status. The DCD status is
returned, not written: the controller writes it once and then emits the events.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from syncagent.api import (
    DynamoComponentDeployment,
    problems_message,
    validate_component_deployment,
)
from syncagent.api.component import checkpoint_of
from syncagent.api.schemas import LiveChecks
from syncagent.kube import being_deleted, controlled_by, controller_of, kinds
from syncagent.kube.objects import Body, Meta
from syncagent.programs import modelservice, status, wait_leader_configmap
from syncagent.programs.base import QueuedEvent
from syncagent.programs.capabilities import LWS, Capabilities
from syncagent.programs.context import parse
from syncagent.programs.readiness import workload_ready
from syncagent.programs.view import Obj, Store, checkpoint_readiness
from syncagent.programs.view import environment as namespace_environment
from syncagent.programs.writes import RefusedError, Writer
from syncagent.render import (
    AgentAccount,
    ComponentSource,
    Environment,
    Infrastructure,
    Rendered,
    RenderError,
    component_selector,
    discovery_identity,
    is_legacy_worker,
    origin_version,
    render_component,
    source_of_object,
)
from syncagent.render.inputs import discovery_on
from syncagent.render.multinode import mounts_wait_leader
from syncagent.render.naming import component_service_name, lws_name
from syncagent.render.workload_meta import dcd_owner
from syncagent.ssa import PreconditionError, SsaError, owner_of

log = logging.getLogger(__name__)
RECONCILING = "Reconciling"
INVALID_CHECKPOINT = "InvalidCheckpointConfiguration"


@dataclass
class ComponentResult:
    status: dict[str, Any]
    events: list[QueuedEvent] = field(default_factory=list)
    retry: bool = False
    conflict: bool = False  # as ProgramResult.conflict


@dataclass
class ComponentContext:
    dcd: Obj
    caps: Capabilities
    store: Store
    writer: Writer
    discovery_backend: str = "kubernetes"
    agent_account: AgentAccount | None = None  # no pod may run as it (render/podtemplate.py)
    infrastructure: Infrastructure = field(
        default_factory=Infrastructure
    )  # the operator configuration's addresses
    now: str = field(default_factory=status.now_rfc3339)
    # The agent's (or plan's) remembered schema checks, owned where it is put together.
    checks: LiveChecks = field(default_factory=LiveChecks, kw_only=True)

    @property
    def meta(self) -> Meta:
        return Body(self.dcd).meta

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def generation(self) -> int:
        return self.meta.generation

    @property
    def ref(self) -> str:
        return f"DynamoComponentDeployment/{self.namespace}/{self.meta.name}"


def _workload_kind(source: ComponentSource) -> tuple[str, str]:
    if source.multinode:
        return "LeaderWorkerSet", lws_name(source.name)
    return "Deployment", source.name


class WorkloadProgram:
    async def reconcile(self, ctx: ComponentContext) -> ComponentResult:
        source = _with_graph_origin(ctx, source_of_object(ctx.dcd))
        kind, _ = _workload_kind(source)
        problem, reason = _validate(ctx.dcd, ctx.checks)
        if problem:
            return self._error(ctx, kind, problem, retry=False, reason=reason)
        try:
            return await self._reconcile(ctx, source)
        except RenderError as err:
            return self._error(ctx, kind, err.message, retry=False)
        except RefusedError as err:
            return self._error(ctx, kind, err.message, retry=True)
        except SsaError as err:
            conflict = isinstance(err, PreconditionError)
            return self._error(ctx, kind, str(err), retry=True, conflict=conflict)

    def _error(
        self,
        ctx: ComponentContext,
        kind: str,
        message: str,
        *,
        retry: bool,
        reason: str = RECONCILING,
        conflict: bool = False,
    ) -> ComponentResult:
        if not conflict:
            log.warning(
                f"{ctx.ref}: reconcile failed: {message}",
                extra={"object": ctx.ref, "error": message},
            )
        inp = status.ComponentStatusInput(
            generation=ctx.generation, kind=kind, error=message, error_reason=reason
        )
        built = status.component_status(inp, previous=Body(ctx.dcd).status, now=ctx.now)
        return ComponentResult(built, list(ctx.writer.events), retry=retry, conflict=conflict)

    async def _reconcile(self, ctx: ComponentContext, source: ComponentSource) -> ComponentResult:
        env = self._environment(ctx, source)
        legacy = self._legacy(ctx, source)
        uid = ctx.meta.uid
        objects = render_component(
            source, env=env, lws=ctx.caps.has(LWS), legacy_worker=legacy, uid=uid
        )
        owner = owner_of(ctx.dcd)
        if source.parent_graph is None and discovery_on(source, env):
            for obj in discovery_identity(
                source.name, namespace=source.namespace, owner=dcd_owner(source, uid=uid)
            ):
                current = ctx.store.get(obj.kind, source.namespace, obj.name)
                if not being_deleted(current):
                    await ctx.writer.apply_owned(obj, owner=owner, live=current)
        if source.parent_graph is None:
            wanted = mounts_wait_leader(objects.workload.body)
            await wait_leader_configmap.sync(
                ctx.writer, ctx.store, owner=ctx.dcd, parent=source.name, wanted=wanted
            )
        kind, name = _workload_kind(source)
        live = ctx.store.get(kind, source.namespace, name)
        workload = live
        if not being_deleted(live):
            workload = (
                await ctx.writer.apply_owned(objects.workload, owner=owner, live=live)
            ).object
        ready = workload_ready(kind, workload)
        message = f"{kind} {name} is {'ready' if ready else 'not ready'}"
        if objects.service is not None:
            service_ok, service_message = await self._service(
                ctx, source, objects.service, ready=ready, legacy=legacy, kind=kind, name=name
            )
            if ready and not service_ok:
                ready, message = False, service_message
        else:
            await self._drop_service(ctx, source)
        if objects.model_service is not None:
            await modelservice.ensure(ctx.writer, ctx.store, objects.model_service, owner=owner)
        await modelservice.leave_others(
            ctx.writer,
            ctx.store,
            namespace=source.namespace,
            owner=owner,
            keep=objects.model_service.name if objects.model_service else None,
        )
        if ready:
            await self._drop_other_kind(ctx, source, kind)
        inp = status.ComponentStatusInput(
            generation=ctx.generation,
            kind=kind,
            ready=ready,
            message=message,
            component=status.replica_status(
                kind, name, workload, runtime_namespace=source.runtime_namespace
            ),
        )
        built = status.component_status(inp, previous=Body(ctx.dcd).status, now=ctx.now)
        return ComponentResult(built, list(ctx.writer.events))

    def _environment(self, ctx: ComponentContext, source: ComponentSource) -> Environment:
        use = checkpoint_of(source.spec)
        checkpoints = checkpoint_readiness(ctx.store, source.namespace, [use.ref] if use else [])
        return namespace_environment(
            ctx.store,
            source.namespace,
            discovery_backend=ctx.discovery_backend,
            checkpoints=checkpoints,
            agent_account=ctx.agent_account,
            infrastructure=ctx.infrastructure,
        )

    def _legacy(self, ctx: ComponentContext, source: ComponentSource) -> bool:
        """Alpha-era pods still say ``worker``: keep it so they do not roll (docs/rendering.md §2)."""
        labels: list[Mapping[str, str]] = [ctx.meta.labels]
        for kind, name in (("Deployment", source.name), ("LeaderWorkerSet", lws_name(source.name))):
            obj = ctx.store.get(kind, source.namespace, name) or {}
            spec = obj.get("spec") or {}
            templates = (
                [spec.get("template")]
                if kind == "Deployment"
                else [(spec.get("leaderWorkerTemplate") or {}).get("leaderTemplate")]
            )
            labels += [Body(t).meta.labels for t in templates]
        svc = ctx.store.get("Service", source.namespace, component_service_name(source.name)) or {}
        labels.append((svc.get("spec") or {}).get("selector") or {})
        return is_legacy_worker(source.type, labels)

    async def _service(
        self,
        ctx: ComponentContext,
        source: ComponentSource,
        rendered: Rendered,
        *,
        ready: bool,
        legacy: bool,
        kind: str,
        name: str,
    ) -> tuple[bool, str]:
        """Apply the component Service; whether it is ours and selects this workload."""
        live = ctx.store.get("Service", source.namespace, rendered.name)
        waiting = f"Service {rendered.name} does not select {kind} {name} yet"
        if being_deleted(live):
            return False, waiting
        target = component_selector(source, legacy_worker=legacy)
        current = controller_of(live) if live else None
        parent = _parent_graph_uid(ctx.dcd)
        if current is not None and parent and current.uid == parent:
            # The graph still controls it; the DCD takes over only after the hand-back.
            return False, waiting
        if live is not None and not ready:
            # An existing Service keeps its live selector until the new workload is ready.
            kept = (live.get("spec") or {}).get("selector")
            if kept and kept != target:
                rendered = _with_selector(rendered, kept)
        entry = await ctx.writer.apply_owned(rendered, owner=owner_of(ctx.dcd), live=live)
        selector = (entry.object.get("spec") or {}).get("selector")
        ours = controlled_by(entry.object, ctx.meta.uid)
        return bool(ours and selector == target), waiting

    async def _drop_service(self, ctx: ComponentContext, source: ComponentSource) -> None:
        name = component_service_name(source.name)
        live = ctx.store.get("Service", source.namespace, name)
        if live and not being_deleted(live) and controlled_by(live, ctx.meta.uid):
            await ctx.writer.delete(live)

    async def _drop_other_kind(
        self, ctx: ComponentContext, source: ComponentSource, kind: str
    ) -> None:
        """After a Deployment <-> LeaderWorkerSet switch, delete the old one (new one ready)."""
        other = (
            ("LeaderWorkerSet", lws_name(source.name))
            if kind == "Deployment"
            else ("Deployment", source.name)
        )
        live = ctx.store.get(other[0], source.namespace, other[1])
        if live and not being_deleted(live) and controlled_by(live, ctx.meta.uid):
            await ctx.writer.delete(live)


def _with_graph_origin(ctx: ComponentContext, source: ComponentSource) -> ComponentSource:
    """The parent graph's operator origin version, which the DCD does not carry (docs/rendering.md §1)."""
    if source.parent_graph is None:
        return source
    live = ctx.store.get(kinds.DGD.kind, source.namespace, source.parent_graph)
    graph = parse(live)[0] if live is not None else None
    if graph is None:
        return source  # the graph's reconciler reports a graph that does not parse
    version = origin_version(graph, source.component_name)
    return dataclasses.replace(source, origin_version=version)


def _with_selector(rendered: Rendered, selector: Mapping[str, str]) -> Rendered:
    body = rendered.manifest()
    body["spec"]["selector"] = dict(selector)
    return dataclasses.replace(rendered, body=body)


def _parent_graph_uid(dcd: Obj) -> str:
    graph = Body(dcd).controller_of_kind(kinds.DGD.kind)
    return graph.uid if graph is not None else ""


def _validate(dcd: Obj, checks: LiveChecks) -> tuple[str, str]:
    """``(message, Available reason)`` of an invalid DCD; an empty message when it is valid."""
    found = checks.check(dcd).errors
    if found:
        return "; ".join(str(f) for f in found), RECONCILING
    try:
        model = DynamoComponentDeployment.model_validate(dcd)
    except ValidationError as err:
        return str(err).splitlines()[0], RECONCILING
    problems = validate_component_deployment(model)
    if not problems:
        return "", RECONCILING
    # A checkpoint without a ref gets its own reason (docs/lifecycle.md §3, our design).
    reason = INVALID_CHECKPOINT if any(p.rule == "V10" for p in problems) else RECONCILING
    return problems_message(problems), reason


def finished_component_events(dcd: Obj, outcome: ComponentResult) -> list[QueuedEvent]:
    """The events a finished DCD reconcile emits once its status is persisted (agent and
    ``plan``): its writes' own, then ``ReconcileError`` when its error message changed."""
    return outcome.events + component_error_events(dcd, outcome.status)


def component_error_events(dcd: Obj, new: Mapping[str, Any]) -> list[QueuedEvent]:
    """``ReconcileError`` on the DCD when its error message appears or changes."""
    old = status.find(Body(dcd).status.get("conditions"), status.AVAILABLE) or {}
    cur = status.find(new.get("conditions"), status.AVAILABLE) or {}
    if cur.get("reason") != "Reconciling" or old.get("message") == cur.get("message"):
        return []
    return [QueuedEvent("Warning", "ReconcileError", str(cur.get("message")))]
