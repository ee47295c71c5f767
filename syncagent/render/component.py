"""Everything the Component pathway applies: per DCD, per graph, and for a standalone DCD."""

from __future__ import annotations

from dataclasses import dataclass

from syncagent.api.graph import DynamoGraphDeployment
from syncagent.render.dcd import (
    GraphLive,
    generate_dcds,
    graph_namespace,
    graph_owner,
    graph_sources,
    graph_worker_hash,
)
from syncagent.render.deployment import deployment
from syncagent.render.identity import discovery_identity
from syncagent.render.inputs import ComponentSource, Environment, discovery_on
from syncagent.render.lws import leader_worker_set
from syncagent.render.model import Rendered, RenderError
from syncagent.render.multinode import mounts_wait_leader, wait_leader_config_map
from syncagent.render.services import component_service, model_service, wants_component_service
from syncagent.render.workload_meta import dcd_owner

NO_ORCHESTRATOR = "no multinode orchestrator available"


@dataclass(frozen=True, slots=True)
class ComponentObjects:
    """What one DCD's reconcile applies."""

    workload: Rendered
    service: Rendered | None
    model_service: Rendered | None

    def all(self) -> list[Rendered]:
        return [o for o in (self.workload, self.service, self.model_service) if o is not None]


def render_component(
    source: ComponentSource,
    *,
    env: Environment,
    lws: bool,
    legacy_worker: bool = False,
    uid: str = "",
) -> ComponentObjects:
    """The workload, component Service and model Service of one DCD (``uid`` = the DCD's)."""
    if source.multinode and not lws:
        raise RenderError(NO_ORCHESTRATOR, reason="no_multinode_orchestrator_available")
    if source.multinode:
        workload = leader_worker_set(source, env=env, legacy_worker=legacy_worker)
    else:
        workload = deployment(source, env=env, legacy_worker=legacy_worker)
    owner = dcd_owner(source, uid=uid)
    service = None
    if wants_component_service(source, env):
        service = component_service(source, env=env, owner=owner, legacy_worker=legacy_worker)
    shared = None
    if source.model:
        shared = model_service(source.model, namespace=source.namespace, owner=owner)
    return ComponentObjects(workload=workload, service=service, model_service=shared)


def render_graph(
    graph: DynamoGraphDeployment,
    *,
    env: Environment,
    lws: bool,
    live: GraphLive | None = None,
) -> list[Rendered]:
    """Every object the Component pathway applies for a graph, in apply order.

    Identity first, then the DCDs, then each DCD's workload and Service, then one model
    Service per distinct model, controlled by the last DCD that references it: upstream's DCD
    reconcile makes itself the controller of the Service it syncs, so one pass over the DCDs in
    the order they were created leaves the last one there (a live agent keeps whichever DCD
    controls it and the others join as owners, docs/ownership.md).

    Worker DCDs carry the worker generation upstream's operator recorded on the graph, if any
    (docs/parity.md D1), so a graph it served keeps its objects' names.
    """
    dcds = generate_dcds(graph, live=live, env=env, worker_hash=graph_worker_hash(graph))
    sources = graph_sources(graph, dcds)
    out = graph_shared_objects(graph, sources, env=env)
    out += dcds
    models: dict[str, Rendered] = {}
    for source in sources:
        objects = render_component(source, env=env, lws=lws)
        out += [objects.workload, *([objects.service] if objects.service else [])]
        if objects.model_service:
            models[objects.model_service.name] = objects.model_service
    return out + list(models.values())


def graph_shared_objects(
    graph: DynamoGraphDeployment, sources: list[ComponentSource], *, env: Environment
) -> list[Rendered]:
    """What every pathway applies once per graph before its workloads: the discovery identity
    (Kubernetes discovery on) and the wait-for-leader ConfigMap (a multinode component)."""
    name, namespace = graph.name, graph_namespace(graph)
    owner = graph_owner(graph)
    out: list[Rendered] = []
    if any(discovery_on(s, env) for s in sources):
        out += discovery_identity(name, namespace=namespace, owner=owner)
    if any(s.multinode for s in sources):
        out.append(wait_leader_config_map(name, namespace=namespace, owner=owner))
    return out


def render_standalone(
    source: ComponentSource, *, env: Environment, lws: bool, uid: str = ""
) -> list[Rendered]:
    """A DCD without a parent graph: it owns its own discovery identity."""
    out: list[Rendered] = []
    owner = dcd_owner(source, uid=uid)
    if discovery_on(source, env):
        out += discovery_identity(source.name, namespace=source.namespace, owner=owner)
    objects = render_component(source, env=env, lws=lws, uid=uid)
    if mounts_wait_leader(objects.workload.body):
        out.append(wait_leader_config_map(source.name, namespace=source.namespace, owner=owner))
    return out + objects.all()
