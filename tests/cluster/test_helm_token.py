"""The chart's RBAC on a real API server (RBAC and OwnerReferencesPermissionEnforcement on),
acting with a token of the ServiceAccount the chart created, installed with watchNamespaces=[a].
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lightkube import ApiError, Client
from lightkube.models.authorization_v1 import ResourceAttributes, SelfSubjectAccessReviewSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.authorization_v1 import SelfSubjectAccessReview
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Event, Namespace, Secret, Service, ServiceAccount
from lightkube.resources.events_v1 import Event as EventV1
from lightkube.resources.rbac_authorization_v1 import Role, RoleBinding
from lightkube.types import PatchType

from syncagent.devcluster import ControlPlane
from syncagent.render.identity import discovery_identity
from syncagent.render.model import OwnerRef
from syncagent.runtime.leader import LeaseConfig
from tests.cluster.support.objects import (
    deployment,
    disaggregatedset,
    leaderworkerset,
    podcliqueset,
    service,
)
from tests.support.helm import (
    DCD,
    DGD,
    DS,
    LWS,
    PCLQ,
    PCS,
    Helm,
    component,
    graph,
    owned,
    token_client,
)

RESOURCE_FOR = {
    "ServiceAccount": ServiceAccount,
    "Role": Role,
    "RoleBinding": RoleBinding,
}


@dataclass(frozen=True)
class Installed:
    release_ns: str
    watched: str
    other: str
    account: str
    token: str


@pytest.fixture
def installed(
    control_plane: ControlPlane, client: Client, namespace: str, tmp_path: Path
) -> Iterator[Installed]:
    helm = Helm(control_plane, tmp_path)
    watched, other = f"{namespace}-a", f"{namespace}-b"
    for name in (watched, other):
        client.create(Namespace(metadata=ObjectMeta(name=name, labels={"syncagent-test": "true"})))
    try:
        helm.install(namespace, namespace, "crds.install=false", f"watchNamespaces={{{watched}}}")
        try:
            account = f"{namespace}-syncagent"
            # The chart made the account; token_for would quietly create a missing one.
            live = client.get(ServiceAccount, account, namespace=namespace)
            assert live.metadata.labels["app.kubernetes.io/managed-by"] == "Helm"
            token = control_plane.token_for(namespace=namespace, service_account=account)
            yield Installed(namespace, watched, other, account, token)
        finally:
            helm.uninstall(namespace, namespace)
    finally:
        for name in (watched, other):
            client.delete(Namespace, name)


@pytest.fixture
def agent(control_plane: ControlPlane, installed: Installed) -> Iterator[Client]:
    with token_client(control_plane, installed.token) as c:
        yield c


def can(
    client: Client,
    verb: str,
    resource: str,
    *,
    group: str = "",
    namespace: str | None = None,
    subresource: str | None = None,
    name: str | None = None,
) -> bool:
    attributes = ResourceAttributes(
        verb=verb,
        group=group,
        resource=resource,
        namespace=namespace,
        subresource=subresource,
        name=name,
    )
    review = client.create(
        SelfSubjectAccessReview(spec=SelfSubjectAccessReviewSpec(resourceAttributes=attributes))
    )
    assert review.status is not None
    return bool(review.status.allowed)


def forbidden(call: Any, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(ApiError) as denied:
        call(*args, **kwargs)
    assert denied.value.status.code == 403, denied.value.status.message


# -- tests ----------------------------------------------------------------------------------


def test_token_is_the_chart_service_account(agent: Client, installed: Installed) -> None:
    # A positive control for every denial below: the token works and is who we think.
    assert can(
        agent, "list", "dynamographdeployments", group="nvidia.com", namespace=installed.watched
    )
    assert not can(agent, "list", "nodes")
    # watchNamespaces is set: nothing of the agent's job is granted cluster-wide (issue 14 item 7)
    assert not can(agent, "list", "dynamographdeployments", group="nvidia.com")


def test_secrets_readable_in_watched_namespace_and_denied_outside(
    agent: Client, client: Client, installed: Installed
) -> None:
    for ns in (installed.watched, installed.other):
        client.create(Secret(metadata=ObjectMeta(name="pull", namespace=ns), stringData={"a": "b"}))

    for verb in ("list", "watch"):
        assert can(agent, verb, "secrets", namespace=installed.watched)
        assert not can(agent, verb, "secrets", namespace=installed.other)
        assert not can(agent, verb, "secrets")  # all namespaces
    listed = agent.list(Secret, namespace=installed.watched)
    assert [s.metadata.name for s in listed] == ["pull"]
    # Pull-secret discovery lists and watches; no Secret is read by name (issue 26).
    forbidden(agent.get, Secret, "pull", namespace=installed.watched)
    forbidden(lambda: list(agent.list(Secret, namespace="*")))
    forbidden(
        agent.create,
        Secret(metadata=ObjectMeta(name="mine", namespace=installed.watched)),
    )


def test_agent_can_write_every_child_kind(
    agent: Client, client: Client, installed: Installed
) -> None:
    ns = installed.watched
    dgd = client.create(DGD.from_dict(graph(ns, "g"))).to_dict()

    # blockOwnerDeletion on a DGD reference needs update on dynamographdeployments/finalizers.
    dcd = agent.apply(DCD.from_dict(owned(component(ns, "g-frontend"), dgd))).to_dict()
    assert dcd["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True
    # ... and on a DCD reference, dynamocomponentdeployments/finalizers.
    workload = agent.apply(Deployment.from_dict(owned(deployment(ns, "g-frontend"), dcd)))
    assert workload.metadata.ownerReferences[0].kind == "DynamoComponentDeployment"

    for resource, body in (
        (LWS, leaderworkerset(ns, "g-decode")),
        (DS, disaggregatedset(ns, "g")),
        (PCS, podcliqueset(ns, "g")),
        (Service, service(ns, "g-frontend")),
    ):
        made = agent.apply(resource.from_dict(owned(body, dgd)))
        assert made.metadata.ownerReferences[0].uid == dgd["metadata"]["uid"]

    status = {"apiVersion": dgd["apiVersion"], "kind": dgd["kind"], "metadata": {"name": "g"}}
    status["status"] = {"observedGeneration": 1}
    agent.patch(DGD.Status, "g", status, namespace=ns, patch_type=PatchType.APPLY, force=True)
    assert client.get(DGD, "g", namespace=ns).status["observedGeneration"] == 1

    agent.delete(Deployment, "g-frontend", namespace=ns)
    agent.delete(DCD, "g-frontend", namespace=ns)
    forbidden(agent.delete, DGD, "g", namespace=ns)


def test_agent_scales_grove_cliques_through_the_scale_subresource(
    agent: Client, client: Client, installed: Installed
) -> None:
    ns = installed.watched
    clique = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodClique",
        "metadata": {"name": "g-0-worker", "namespace": ns},
        "spec": {
            "roleName": "worker",
            "replicas": 1,
            "podSpec": {"containers": [{"name": "main", "image": "img:1"}]},
        },
    }
    client.create(PCLQ.from_dict(clique))
    # The agent never reads /scale (replicas come from its PodClique cache): patch only.
    forbidden(agent.get, PCLQ.Scale, "g-0-worker", namespace=ns)
    agent.patch(
        PCLQ.Scale,
        "g-0-worker",
        {"spec": {"replicas": 3}},
        namespace=ns,
        patch_type=PatchType.MERGE,
    )
    assert client.get(PCLQ, "g-0-worker", namespace=ns)["spec"]["replicas"] == 3
    forbidden(
        agent.patch,
        PCLQ,
        "g-0-worker",
        {"spec": {"replicas": 4}},
        namespace=ns,
        patch_type=PatchType.MERGE,
    )


def test_discovery_identity_only_in_watched_namespaces(
    agent: Client, client: Client, installed: Installed
) -> None:
    # Creating the graph's discovery Role passes RBAC's escalation check only where the agent
    # holds every right that Role grants: in the watched namespace. Elsewhere it may write no
    # part of the identity at all (the rights are bound per watched namespace).
    for ns, allowed in ((installed.watched, True), (installed.other, False)):
        dgd = client.create(DGD.from_dict(graph(ns, "g"))).to_dict()
        owner = OwnerRef("nvidia.com/v1beta1", "DynamoGraphDeployment", "g", dgd["metadata"]["uid"])
        for rendered in discovery_identity("g", namespace=ns, owner=owner):
            resource = RESOURCE_FOR[rendered.kind]
            body = rendered.create_manifest()
            if allowed:
                made = agent.apply(resource.from_dict(body), field_manager=rendered.manager)
                assert made.metadata.ownerReferences[0].uid == dgd["metadata"]["uid"]
            else:
                forbidden(agent.apply, resource.from_dict(body), field_manager=rendered.manager)


def test_agent_emits_core_events_only(agent: Client, installed: Installed) -> None:
    ns = installed.watched
    core = {
        "metadata": {"name": f"g.{uuid.uuid4().hex[:8]}", "namespace": ns},
        "involvedObject": {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "name": "g",
            "namespace": ns,
        },
        "reason": "Test",
        "message": "core event",
        "type": "Normal",
        "source": {"component": "syncagent"},
    }
    made = agent.create(Event.from_dict(core))
    agent.patch(Event, made.metadata.name, {"count": 2}, namespace=ns, patch_type=PatchType.MERGE)
    modern = {
        "metadata": {"name": f"g.{uuid.uuid4().hex[:8]}", "namespace": ns},
        "eventTime": "2026-01-01T00:00:00.123456Z",
        "reportingController": "syncagent",
        "reportingInstance": "syncagent-0",
        "action": "Reconcile",
        "reason": "Test",
        "type": "Normal",
        "regarding": core["involvedObject"],
        "note": "events.k8s.io event",
    }
    # The agent writes core v1 Events only: nothing grants the events.k8s.io API.
    forbidden(agent.create, EventV1.from_dict(modern))
    forbidden(agent.delete, Event, made.metadata.name, namespace=ns)


@pytest.mark.parametrize(
    ("verb", "group", "resource", "subresource"),
    [
        ("update", "nvidia.com", "dynamographdeployments", None),
        ("update", "nvidia.com", "dynamographdeployments", "status"),
        ("update", "nvidia.com", "dynamocomponentdeployments", None),
        ("update", "apps", "deployments", None),
        ("update", "", "services", None),
        ("update", "grove.io", "podcliques", "scale"),
        ("get", "grove.io", "podcliques", "scale"),
        ("update", "", "events", None),
        ("list", "apiextensions.k8s.io", "customresourcedefinitions", None),
        # Issue 26: removed because the recorded run never sent them.
        ("get", "nvidia.com", "dynamocheckpoints", None),
        ("get", "", "secrets", None),
        ("get", "grove.io", "podcliques", None),
        ("delete", "", "serviceaccounts", None),
        ("delete", "rbac.authorization.k8s.io", "roles", None),
        ("delete", "rbac.authorization.k8s.io", "rolebindings", None),
    ],
)
def test_agent_is_denied_verbs_it_never_uses(
    agent: Client,
    installed: Installed,
    verb: str,
    group: str,
    resource: str,
    subresource: str | None,
) -> None:
    """Issue 14 item 7: in a watched namespace too, only verbs its requests use."""
    assert not can(
        agent, verb, resource, group=group, namespace=installed.watched, subresource=subresource
    )


def test_agent_holds_only_its_own_lease(agent: Client, installed: Installed) -> None:
    ns = installed.release_ns
    name = LeaseConfig.__dataclass_fields__["name"].default
    lease = agent.create(
        Lease.from_dict(
            {
                "metadata": {"name": name, "namespace": ns},
                "spec": {"holderIdentity": "agent-0", "leaseDurationSeconds": 15},
            }
        )
    )
    lease.spec.holderIdentity = "agent-1"
    assert agent.replace(lease).spec.holderIdentity == "agent-1"
    assert not can(
        agent, "update", "leases", group="coordination.k8s.io", namespace=ns, name="someone-else"
    )
    # The elector never patches its Lease (GET, PUT, POST only).
    assert not can(agent, "patch", "leases", group="coordination.k8s.io", namespace=ns, name=name)
    assert not can(
        agent, "create", "leases", group="coordination.k8s.io", namespace=installed.watched
    )


@pytest.mark.parametrize(
    ("verb", "group", "resource", "subresource"),
    [
        ("list", "nvidia.com", "dynamocheckpoints", None),
        # A graph the upstream operator served: its managedFields and, on deletion, its
        # nvidia.com/ finalizer (docs/ownership.md §5).
        ("patch", "nvidia.com", "dynamographdeployments", None),
        ("update", "nvidia.com", "dynamographdeployments", "finalizers"),
        ("update", "nvidia.com", "dynamocomponentdeployments", "finalizers"),
        ("patch", "nvidia.com", "dynamocomponentdeployments", "status"),
        ("patch", "grove.io", "podcliquescalinggroups", "scale"),
        ("create", "rbac.authorization.k8s.io", "rolebindings", None),
        ("create", "", "serviceaccounts", None),
        ("patch", "", "configmaps", None),
        ("patch", "", "events", None),
    ],
)
def test_agent_is_allowed(
    agent: Client,
    installed: Installed,
    verb: str,
    group: str,
    resource: str,
    subresource: str | None,
) -> None:
    assert can(
        agent, verb, resource, group=group, namespace=installed.watched, subresource=subresource
    )


@pytest.mark.parametrize(
    ("verb", "group", "resource"),
    [
        ("create", "nvidia.com", "dynamographdeployments"),
        ("delete", "nvidia.com", "dynamographdeployments"),
        ("create", "nvidia.com", "dynamocheckpoints"),
        ("patch", "grove.io", "podcliques"),
        ("list", "", "configmaps"),
        ("create", "", "pods"),
        ("list", "", "pods"),
        ("escalate", "rbac.authorization.k8s.io", "roles"),
        ("bind", "rbac.authorization.k8s.io", "roles"),
        ("create", "apiextensions.k8s.io", "customresourcedefinitions"),
        # watchNamespaces=[watched]: no workload, Service or identity writes anywhere else
        ("create", "", "services"),
        ("delete", "", "services"),
        ("create", "apps", "deployments"),
        ("patch", "leaderworkerset.x-k8s.io", "leaderworkersets"),
        ("create", "", "serviceaccounts"),
        ("create", "rbac.authorization.k8s.io", "roles"),
        ("list", "nvidia.com", "dynamographdeployments"),
    ],
)
def test_agent_is_denied_outside_its_job(
    agent: Client, installed: Installed, verb: str, group: str, resource: str
) -> None:
    # Pods are readable in the watched namespace only (for the discovery Role), never elsewhere.
    assert not can(agent, verb, resource, group=group, namespace=installed.other)
