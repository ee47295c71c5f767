"""Run the agent's own programs for a graph, with dry runs only (``syncagent plan``).

Seam for the programs: the DGD reconcile is the agent's (``programs.graph``: routing,
validation, program choice); each DynamoComponentDeployment it would apply is then reconciled by the workload
program, as the agent's DCD reconciler would once the DCD exists. Both run against a
:class:`~syncagent.inspect.planapplier.PlanApplier` and a store read once from the server.
The DisaggregatedSet and Grove programs plug in through the controller: nothing here
names a pathway.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from httpx2 import AsyncClient

from fieldmanagers import component_status, graph_status
from syncagent.api.schemas import LiveChecks
from syncagent.inspect.planapplier import PlanApplier
from syncagent.kube import kinds
from syncagent.kube.objects import Body
from syncagent.programs import capabilities as caps_mod
from syncagent.programs import status
from syncagent.programs.base import QueuedEvent
from syncagent.programs.capabilities import Capabilities, Setting
from syncagent.programs.graph import finished_events, graph_context, run_graph
from syncagent.programs.registry import Registry
from syncagent.programs.view import DictStore, Obj
from syncagent.programs.workload import (
    ComponentContext,
    WorkloadProgram,
    finished_component_events,
)
from syncagent.programs.writes import Writer
from syncagent.render import NO_INFRASTRUCTURE, Infrastructure
from syncagent.runtime.discovery import served_resources
from syncagent.ssa import (
    ApiError,
    ChangeSetEntry,
    Engine,
    PreconditionError,
    RequestCounter,
    ref_of,
)
from syncagent.ssa.applier import Applier
from syncagent.ssa.compare import differences

# The manager the plan's own dry run of the input graph uses: the graph is the user's to apply
# (kubectl, GitOps); the plan only needs the server's view of it (defaults, validation, uid).
INPUT_MANAGER = "syncagent-plan"

_SERVER_SET = ("managedFields", "uid", "creationTimestamp", "deletionTimestamp", "generation")
_SERVER_SET += ("resourceVersion", "selfLink", "deletionGracePeriodSeconds")


@dataclass
class InputRow:
    """The input object itself (graph or standalone DCD): what applying the file changes."""

    subject: str
    entry: ChangeSetEntry


@dataclass(frozen=True)
class StatusWrite:
    """The status the agent would write (only when it differs from the live one)."""

    subject: str
    manager: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any]


@dataclass(frozen=True)
class PlannedEvent:
    """An event the agent would emit once its writes and the status write succeeded."""

    subject: str
    type: str
    reason: str
    message: str


@dataclass
class PlanRun:
    applier: PlanApplier
    programs: Registry  # the composition root's
    inputs: list[InputRow] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    live: dict[str, Obj] = field(default_factory=dict)  # every object read, by subject
    status_writes: list[StatusWrite] = field(default_factory=list)
    events: list[PlannedEvent] = field(default_factory=list)
    checks: LiveChecks = field(default_factory=LiveChecks)  # schema checks, remembered
    infrastructure: Infrastructure = field(
        default_factory=Infrastructure
    )  # the operator configuration's addresses


async def capabilities_of(
    client: AsyncClient, settings: Mapping[str, Setting], *, programs: Registry
) -> Capabilities:
    served = await served_resources(client, programs.group_versions())
    return caps_mod.resolve(served, settings, declared=programs.capabilities())


async def read_store(applier: Applier, namespace: str, *, programs: Registry) -> DictStore:
    """Everything the programs read for ``namespace``, listed once (reads only)."""
    objects: dict[str, list[Obj]] = {}
    for kind in programs.store_kinds():
        objects[kind.kind] = await _list(applier, kind.api_version, kind.kind, namespace)
    return DictStore(objects)


async def _list(applier: Applier, api_version: str, kind: str, namespace: str) -> list[Obj]:
    try:
        return await applier.list(api_version, kind, namespace)
    except ApiError as err:
        raise PlanError(
            f"{kind} in namespace {namespace}: cannot list: HTTP {err.code} "
            f"{err.server_message}; check the permissions of the user (or --as identity)"
        ) from None


class PlanError(Exception):
    """The plan could not run (one line, names the object)."""


def sparse_input(doc: Mapping[str, Any], *, namespace: str) -> dict[str, Any]:
    """The user's manifest as an apply body: server-set metadata and status removed."""
    body = {k: copy.deepcopy(v) for k, v in doc.items() if k != "status"}
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k not in _SERVER_SET}
    meta["namespace"] = meta.get("namespace") or namespace
    body["metadata"] = meta
    return body


async def plan_documents(
    client: AsyncClient,
    docs: Sequence[Mapping[str, Any]],
    *,
    namespace: str,
    settings: Mapping[str, Setting],
    programs: Registry,
    discovery_backend: str = "kubernetes",
    counter: RequestCounter | None = None,
    input_client: AsyncClient | None = None,
    infrastructure: Infrastructure = NO_INFRASTRUCTURE,
) -> PlanRun:
    """Plan every DGD / DCD document: what the agent would do, from dry runs only.

    ``client`` is the agent's identity (``--as``); ``input_client`` the user's, for the dry
    run of the input itself (the user applies the graph; the agent never writes its spec).
    """
    applier = PlanApplier(Engine(client, counter=counter))
    caps = await capabilities_of(client, settings, programs=programs)
    user = applier if input_client is None else PlanApplier(Engine(input_client))
    run = PlanRun(applier, programs, infrastructure=infrastructure)
    return await _plan(run, docs, namespace, caps, discovery_backend, user)


async def _plan(
    run: PlanRun,
    docs: Sequence[Mapping[str, Any]],
    namespace: str,
    caps: Capabilities,
    discovery_backend: str,
    user: Applier,
) -> PlanRun:
    applier = run.applier
    stores: dict[str, DictStore] = {}
    for doc in docs:
        body = sparse_input(doc, namespace=namespace)
        ns = body["metadata"]["namespace"]
        if ns not in stores:
            stores[ns] = await read_store(applier, ns, programs=run.programs)
            for objs in stores[ns].objects.values():
                for obj in objs:
                    run.live[f"{obj['kind']}/{ns}/{Body(obj).meta.name}"] = obj
        store = stores[ns]
        input_entry = await _plan_input(applier, user, store, body)
        run.inputs.append(InputRow(input_entry.subject, input_entry))
        server_view = input_entry.object
        if body["kind"] == kinds.DGD.kind:
            await _plan_graph(run, store, server_view, caps, discovery_backend)
        else:
            await _plan_component(run, store, server_view, caps, discovery_backend)
    return run


async def _plan_input(
    applier: PlanApplier, user: Applier, store: DictStore, body: dict[str, Any]
) -> ChangeSetEntry:
    """The server's view of the input once applied: a dry-run create, or a dry-run update.

    An update (not an apply under a new manager) because the graph becomes the file: an
    apply would keep fields that the file dropped while another manager still owns them.
    """
    meta = body["metadata"]
    live = store.get(body["kind"], meta["namespace"], meta["name"])
    ref = ref_of(body)
    for attempt in range(_ATTEMPTS):
        try:
            result = await _dry_run_input(user, body, live)
            break
        except PreconditionError:
            # The agent wrote the graph (its status) since we read it: read it again.
            if attempt == _ATTEMPTS - 1:
                raise
            live = await applier.read(body)
    _replace(store, result)
    if live is None:
        found: list[str] = ["(object does not exist)"]
    else:
        found = [
            d for d in differences(live, result, manager=INPUT_MANAGER) if INPUT_MANAGER not in d
        ]
    return ChangeSetEntry(
        action="created" if live is None else ("configured" if found else "unchanged"),
        subject=ref.subject,
        object=result,
        manager=INPUT_MANAGER,
        before=live,
        differences=tuple(found),
        dry_run=True,
    )


_ATTEMPTS = 5


async def _dry_run_input(
    user: Applier, body: dict[str, Any], live: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A dry-run create (absent) or update (present, guarded by its resourceVersion), as the
    user (``user`` is a plan applier on the user's client)."""
    if live is None:
        return await user.create(body, manager=INPUT_MANAGER)
    body = {**body, "metadata": _keep_server_metadata(body["metadata"], live)}
    return await user.update(body, manager=INPUT_MANAGER)


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _keep_server_metadata(meta: Mapping[str, Any], live: Mapping[str, Any]) -> dict[str, Any]:
    """The update keeps what other writers keep on the graph and manifests never carry:
    finalizers, owner references and kubectl's last-applied annotation (rewritten by kubectl
    on every apply anyway)."""
    live_meta = Body(live).meta
    out = {**meta, "resourceVersion": live_meta.resource_version}
    for key in ("finalizers", "ownerReferences"):
        if key not in out and live_meta.raw.get(key):
            out[key] = live_meta.raw[key]
    last = live_meta.annotations.get(LAST_APPLIED)
    if last is not None:
        out["annotations"] = {**(out.get("annotations") or {}), LAST_APPLIED: last}
    return out


def _replace(store: DictStore, obj: Obj) -> None:
    kind, meta = obj["kind"], Body(obj).meta
    keep = [
        o
        for o in store.objects.get(kind, [])
        if (Body(o).meta.name, Body(o).meta.namespace) != (meta.name, meta.namespace)
    ]
    store.objects[kind] = [*keep, obj]


async def _plan_graph(
    run: PlanRun, store: DictStore, graph: Obj, caps: Capabilities, backend: str
) -> None:
    # The agent's own DGD path (routing, validation, program choice); see module doc.
    writer = Writer(run.applier, takeover=run.programs.takeover_policy, graph=graph)
    ctx = graph_context(
        graph,
        caps,
        store=store,
        writer=writer,
        discovery_backend=backend,
        programs=run.programs,
        checks=run.checks,
        infrastructure=run.infrastructure,
    )
    outcome = await run_graph(ctx)
    problem = _graph_problem(outcome.status)
    if problem:
        run.errors.append(f"{ctx.ref}: {problem}")
    _record_status(run, graph, outcome.status, graph_status.MANAGER.name)
    _record_events(run, graph, finished_events(ctx, outcome))
    _sync_store(store, run.applier)
    for subject in list(run.applier.records.order):
        if not subject.startswith(f"{kinds.DCD.kind}/") or _deleted(run, subject):
            continue
        await _plan_component(run, store, run.applier.records.composed[subject], caps, backend)


async def _plan_component(
    run: PlanRun, store: DictStore, dcd: Obj, caps: Capabilities, backend: str
) -> None:
    writer = Writer(run.applier, takeover=run.programs.takeover_policy, on=dcd)
    ctx = ComponentContext(
        dcd=dcd,
        caps=caps,
        store=store,
        writer=writer,
        discovery_backend=backend,
        checks=run.checks,
        infrastructure=run.infrastructure,
    )
    outcome = await WorkloadProgram().reconcile(ctx)
    cond = status.find(outcome.status.get("conditions"), status.AVAILABLE) or {}
    if cond.get("reason") == "Reconciling":
        run.errors.append(f"{ctx.ref}: {cond.get('message')}")
    _record_status(run, dcd, outcome.status, component_status.MANAGER.name)
    _record_events(run, dcd, finished_component_events(dcd, outcome))
    _sync_store(store, run.applier)


def _subject(obj: Obj) -> str:
    return Body(obj).subject


def _record_status(run: PlanRun, obj: Obj, desired: dict[str, Any], manager: str) -> None:
    """The status write the controller would make (it writes only a different status)."""
    if not status.status_equal(desired, obj.get("status")):
        run.status_writes.append(StatusWrite(_subject(obj), manager, obj.get("status"), desired))


def _record_events(run: PlanRun, default: Obj, events: Sequence[QueuedEvent]) -> None:
    for event in events:
        subject = _subject(event.on if event.on is not None else default)
        run.events.append(PlannedEvent(subject, event.type, event.reason, event.message))


def _sync_store(store: DictStore, applier: PlanApplier) -> None:
    """What the watch caches would hold once one reconcile's writes arrived: the next
    reconcile (a DCD after its graph, the next DCD) reads them, as in the agent."""
    for obj in applier.records.composed.values():
        _replace(store, obj)
    for deleted in applier.records.deletes:
        uid = Body(deleted.live).meta.uid
        kind = str(deleted.live.get("kind"))
        store.objects[kind] = [o for o in store.objects.get(kind, []) if Body(o).meta.uid != uid]


def _deleted(run: PlanRun, subject: str) -> bool:
    return any(d.subject == subject for d in run.applier.records.deletes)


_FAILED = (status.VALIDATION_FAILED, status.RECONCILE_FAILED, status.PATHWAY_NOT_IMPLEMENTED)


def _graph_problem(st: Mapping[str, Any]) -> str:
    cond = status.find(st.get("conditions"), status.READY) or {}
    if cond.get("reason") in (*_FAILED, status.NO_ORCHESTRATOR):
        return str(cond.get("message") or cond.get("reason"))
    return ""


async def plan_live_graph(
    client: AsyncClient,
    graph: Obj,
    *,
    settings: Mapping[str, Setting],
    programs: Registry,
    discovery_backend: str = "kubernetes",
    counter: RequestCounter | None = None,
) -> PlanRun:
    """Plan a graph as it is in the cluster (what the agent's next reconcile would do)."""
    return await plan_documents(
        client,
        [graph],
        namespace=Body(graph).meta.namespace or "default",
        settings=settings,
        programs=programs,
        discovery_backend=discovery_backend,
        counter=counter,
    )
