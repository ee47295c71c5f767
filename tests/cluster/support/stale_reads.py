"""The engine's re-read of an object its watch cache does not show, made to happen for every kind
the agent applies (no tests here; ``tests/cluster/test_helm_rights.py`` runs it under the
chart's token and reads the GETs from the audit log).

The agent decides from watch caches; the ``get`` it sends on an applied kind reads an object
whose cached view proved stale (``syncagent.ssa.ownership.apply_controlled``: a create-only apply
found the name taken, so the object is read and decided on as it is; a failed resourceVersion
precondition reads the same objects; an adapter's seed, a plain create, reads it the same way). The run's other scenarios read DCDs (each child's owner,
before it is created) and Services too, but none of the other nine kinds. The race is made
here, for one kind at a time, on the real API server: the fault proxy
(``tests/support/apiproxy.py``) holds the agent's watches of that kind, so its cache stops; a
foreign object of the name the agent is about to create appears behind its back (labelled so a
current cache would show it); then a graph asks for that object. The agent's create fails on
the existing name, it reads the object (the GET under test) and refuses it (another manager
owns its fields), writing nothing to it. Without the hold the agent refuses the object from its
cache and sends neither the create nor the GET.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from syncagent.devcluster import ControlPlane
from syncagent.programs.disaggregatedset.render import ds_name
from syncagent.programs.grove.render import pcs_name
from syncagent.programs.registry import COMPONENT_LABEL, WAIT_LEADER_SELECTOR
from syncagent.render.multinode import config_map_name
from syncagent.render.naming import (
    component_service_name,
    dcd_name,
    discovery_role,
    discovery_role_binding,
    discovery_service_account,
    lws_name,
)
from syncagent.render.scalingadapters import adapter_name
from tests.cluster.support import objects
from tests.cluster.support.grove import GROVE_AUTO
from tests.cluster.support.rights import Sent, audit_offset, sent
from tests.support import figures
from tests.support.agent import running_agent
from tests.support.apiproxy import ApiProxy
from tests.support.graphs import (
    ENABLE_DS,
    ENABLE_GROVE,
    component,
    ds_components,
    graph,
    grove_components,
    typed_components,
)
from tests.support.helm import component as standalone_component
from tests.support.kube import Kube
from tests.support.polling import eventually

DEADLINE = 90.0
RBAC = "rbac.authorization.k8s.io"
# Upstream's label on the discovery identity: the agent's watches of it select on this.
IDENTITY_LABELS = {"app.kubernetes.io/managed-by": "dynamo-operator"}
# The agent runs all three pathways; each graph picks its own (Grove takes precedence).
COMPONENT_PATHWAY = {ENABLE_GROVE: "false"}
DS_PATHWAY = {ENABLE_DS: "true", ENABLE_GROVE: "false"}
GROVE_PATHWAY = {ENABLE_GROVE: "true"}


@dataclass(frozen=True)
class Case:
    """One applied kind: the graph that makes the agent create an object of it, that object's
    name, and a foreign object of that name (the minimum its schema accepts)."""

    kind: str
    group: str
    resource: str
    components: list[dict[str, Any]]
    annotations: dict[str, str]
    name: Callable[[str], str]  # graph name -> the object's name
    foreign: Callable[[str, str, str], dict[str, Any]]  # (namespace, name, graph) -> object


def _frontend() -> list[dict[str, Any]]:
    return [component("frontend", "frontend")]


def _multinode() -> list[dict[str, Any]]:
    return [component("prefill", "prefill", nodes=2)]


def _labelled(obj: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    obj["metadata"]["labels"] = {**(obj["metadata"].get("labels") or {}), **labels}
    return obj


def _identity(kind: str, ns: str, name: str, **top: Any) -> dict[str, Any]:
    version = "v1" if kind == "ServiceAccount" else f"{RBAC}/v1"
    meta = {"name": name, "namespace": ns, "labels": dict(IDENTITY_LABELS)}
    return {"apiVersion": version, "kind": kind, "metadata": meta, **top}


def _binding(ns: str, name: str, g: str) -> dict[str, Any]:
    # roleRef is immutable: the foreign binding names the Role the agent's would, so only the
    # refusal (not an invalid write) can keep the agent off it.
    account = {"kind": "ServiceAccount", "name": discovery_service_account(g), "namespace": ns}
    ref = {"apiGroup": RBAC, "kind": "Role", "name": discovery_role(g)}
    return _identity("RoleBinding", ns, name, subjects=[account], roleRef=ref)


def _adapter(ns: str, name: str, g: str) -> dict[str, Any]:
    """A foreign adapter carrying the graph's label (a current cache would show it)."""
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": name, "namespace": ns, "labels": {WAIT_LEADER_SELECTOR: g}},
        "spec": {"replicas": 1, "dgdRef": {"name": g, "componentName": "Frontend"}},
    }


def _frontend_name(g: str) -> str:
    return dcd_name(g, "frontend")


CASES: list[Case] = [
    Case(
        "DynamoComponentDeployment",
        "nvidia.com",
        "dynamocomponentdeployments",
        _frontend(),
        COMPONENT_PATHWAY,
        _frontend_name,
        lambda ns, name, g: standalone_component(ns, name),
    ),
    Case(
        "Deployment",
        "apps",
        "deployments",
        _frontend(),
        COMPONENT_PATHWAY,
        _frontend_name,
        lambda ns, name, g: objects.deployment(ns, name, labels={COMPONENT_LABEL: "frontend"}),
    ),
    Case(
        "Service",
        "",
        "services",
        _frontend(),
        COMPONENT_PATHWAY,
        lambda g: component_service_name(_frontend_name(g)),
        lambda ns, name, g: objects.service(ns, name, labels={COMPONENT_LABEL: "frontend"}),
    ),
    Case(
        "LeaderWorkerSet",
        "leaderworkerset.x-k8s.io",
        "leaderworkersets",
        _multinode(),
        COMPONENT_PATHWAY,
        lambda g: lws_name(dcd_name(g, "prefill")),
        lambda ns, name, g: _labelled(
            objects.leaderworkerset(ns, name), {COMPONENT_LABEL: "prefill"}
        ),
    ),
    Case(
        "ConfigMap",
        "",
        "configmaps",
        _multinode(),
        COMPONENT_PATHWAY,
        config_map_name,
        lambda ns, name, g: _labelled(objects.configmap(ns, name), {WAIT_LEADER_SELECTOR: g}),
    ),
    Case(
        "ServiceAccount",
        "",
        "serviceaccounts",
        _frontend(),
        COMPONENT_PATHWAY,
        discovery_service_account,
        lambda ns, name, g: _identity("ServiceAccount", ns, name),
    ),
    Case(
        "Role",
        RBAC,
        "roles",
        _frontend(),
        COMPONENT_PATHWAY,
        discovery_role,
        lambda ns, name, g: _identity("Role", ns, name, rules=[]),
    ),
    Case(
        "RoleBinding",
        RBAC,
        "rolebindings",
        _frontend(),
        COMPONENT_PATHWAY,
        discovery_role_binding,
        _binding,
    ),
    Case(
        "DynamoGraphDeploymentScalingAdapter",
        "nvidia.com",
        "dynamographdeploymentscalingadapters",
        [component("Frontend", "frontend", scalingAdapter={})],
        COMPONENT_PATHWAY,
        lambda g: adapter_name(g, "Frontend"),
        lambda ns, name, g: _adapter(ns, name, g),
    ),
    Case(
        "DisaggregatedSet",
        "disaggregatedset.x-k8s.io",
        "disaggregatedsets",
        ds_components(),
        DS_PATHWAY,
        ds_name,
        lambda ns, name, g: objects.disaggregatedset(ns, name),
    ),
    Case(
        "PodCliqueSet",
        "grove.io",
        "podcliquesets",
        grove_components(),
        GROVE_PATHWAY,
        lambda g: pcs_name(g, typed_components(grove_components())),
        lambda ns, name, g: objects.podcliqueset(ns, name),
    ),
]


def stale_caches_are_re_read(
    control_plane: ControlPlane, kube: Kube, namespace: str, user: str
) -> None:
    """Every case in turn, with one agent; fails naming each kind it never saw read."""
    unread: list[str] = []
    with (
        ApiProxy(control_plane) as proxy,
        running_agent(proxy.kubeconfig, *GROVE_AUTO, namespace=namespace),
    ):
        for index, case in enumerate(CASES):
            try:
                _re_read(proxy, kube, namespace, user, case, graph_name=f"stale{index}")
            except AssertionError as err:
                unread.append(f"{case.kind}: {err}")
    assert unread == [], "\n".join(unread)


def _re_read(
    proxy: ApiProxy, kube: Kube, ns: str, user: str, case: Case, *, graph_name: str
) -> None:
    """One kind: its watch held, a foreign object behind it, then the graph that wants the name."""
    audit = proxy.plane.audit_log
    name = case.name(graph_name)
    mark = audit_offset(audit)
    _hold(proxy, case.resource)
    try:
        kube.create(case.foreign(ns, name, graph_name))
        kube.create(graph(ns, graph_name, case.components, **case.annotations))
        wanted = (case.group, case.resource, ns, name)
        eventually(
            lambda: _read_after_refused_create(sent(audit, user=user, offset=mark), wanted),
            deadline=DEADLINE,
            what=f"the agent's create of {case.kind} {ns}/{name} refused (409), then its GET",
        )
        figures.count("stale-cache re-reads (GET seen in the audit)", case.kind)
        _untouched(kube, case.kind, ns, name)
    finally:
        proxy.release_watches(case.resource)


def _read_after_refused_create(requests: list[Sent], wanted: tuple[str, ...]) -> bool:
    """The stale-cache path, not just any GET of the name (a standalone DCD's children read
    their owner DCD too): the agent's create-only apply was refused because the object exists
    (409), and the agent then read the object."""
    refused = False
    for r in requests:
        if (r.group, r.resource, r.namespace, r.name) != wanted:
            continue
        # A create-only apply is a PATCH; an adapter's seed is a plain POST (docs/api.md §4).
        refused = refused or (r.verb in ("patch", "create") and r.code == 409)
        if refused and r.verb == "get":
            return True
    return False


def _hold(proxy: ApiProxy, resource: str) -> None:
    """Stop the agent's cache of ``resource``: its watches are cut and the next one waits."""
    proxy.hold_watches(resource)
    eventually(
        lambda: proxy.held_watches(resource) >= 1,
        deadline=DEADLINE,
        what=f"the agent's watch of {resource} held",
    )


def _untouched(kube: Kube, kind: str, ns: str, name: str) -> None:
    """The agent read the foreign object and refused it: no reference, no field of its own."""
    obj = kube.get(kind, ns, name)
    assert obj is not None, f"{kind} {ns}/{name} is gone"
    meta = obj["metadata"]
    managers = {e.get("manager", "") for e in meta.get("managedFields") or ()}
    assert not meta.get("ownerReferences"), (kind, name, meta.get("ownerReferences"))
    assert not any(m.startswith("syncagent/") for m in managers), (kind, name, managers)
