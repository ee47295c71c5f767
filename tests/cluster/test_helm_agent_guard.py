"""Issue 41 item 3 on a real API server: the chart's agent guard (a ValidatingAdmissionPolicy on
the agent's own ServiceAccount, on by default) refuses each write escalation a stolen token of
the default, cluster-wide install has through RBAC alone, and lets the agent's own writes pass.

Every refused write below is one the chart's RBAC allows (the refusal must carry the guard's
message, not RBAC's), so without the guard each of them succeeds. The agent's whole recorded run
under the guard is tests/cluster/test_helm_rights.py.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import ConfigMap, Event, Namespace, Service, ServiceAccount
from lightkube.resources.rbac_authorization_v1 import Role, RoleBinding
from lightkube.types import PatchType

from syncagent.devcluster import ControlPlane, versions
from syncagent.render.identity import discovery_identity
from syncagent.render.model import OwnerRef
from tests.cluster.support.objects import deployment, service
from tests.support.helm import DCD, DGD, Helm, component, graph, owned, token_client
from tests.support.kube import TEST_TIMEOUT
from tests.support.polling import eventually

GUARD = "syncagent agent guard"
RBAC_GROUP = "rbac.authorization.k8s.io"


_IDENTITY_KINDS = {"ServiceAccount": ServiceAccount, "Role": Role, "RoleBinding": RoleBinding}


def _identity(namespace: str, dgd: dict[str, Any]) -> list[Any]:
    """The discovery ServiceAccount, Role and RoleBinding the agent renders for graph ``g``."""
    owner = OwnerRef("nvidia.com/v1beta1", "DynamoGraphDeployment", "g", dgd["metadata"]["uid"])
    return discovery_identity("g", namespace=namespace, owner=owner)


@dataclass(frozen=True)
class Guarded:
    admin: Client
    agent: Client
    release: str
    tenant: str
    account: str
    dgd: dict[str, Any]


@contextlib.contextmanager
def _namespace(admin: Client, name: str) -> Iterator[str]:
    admin.create(Namespace(metadata=ObjectMeta(name=name, labels={"syncagent-test": "true"})))
    try:
        yield name
    finally:
        admin.delete(Namespace, name)


@pytest.fixture(scope="module")
def guarded(control_planes: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    """The chart's default install (cluster-wide RBAC, the guard on), a tenant namespace with a
    graph, and a client holding the chart ServiceAccount's token."""
    control_plane: ControlPlane = control_planes.get(versions.DEFAULT_LWS)
    config = KubeConfig.from_file(str(control_plane.kubeconfig))
    base = f"guard-{uuid.uuid4().hex[:8]}"
    with (
        Client(config=config, field_manager="syncagent-tests", timeout=TEST_TIMEOUT) as admin,
        _namespace(admin, base) as release,
        _namespace(admin, f"{base}-t") as tenant,
    ):
        helm = Helm(control_plane, tmp_path_factory.mktemp("agent-guard"))
        helm.install(release, release, "crds.install=false")
        try:
            account = f"{release}-syncagent"
            token = control_plane.token_for(namespace=release, service_account=account)
            dgd = admin.create(DGD.from_dict(graph(tenant, "g"))).to_dict()
            # The graph's discovery identity exists, as the agent makes it: binding its Role
            # passes RBAC's escalation check (the agent holds every right it grants).
            for rendered in _identity(tenant, dgd):
                admin.apply(_IDENTITY_KINDS[rendered.kind].from_dict(rendered.create_manifest()))
            with token_client(control_plane, token) as agent:
                _wait_for_the_guard(agent)
                yield Guarded(admin, agent, release, tenant, account, dgd)
        finally:
            helm.uninstall(release, release)


def _wait_for_the_guard(agent: Client) -> None:
    """The API server loads a new policy a moment after it is stored (seconds on 1.30): wait
    until a dry run the guard refuses (nothing is stored either way) is refused."""
    body = Deployment.from_dict(deployment("kube-system", "guard-probe"))

    def refused() -> bool:
        try:
            agent.apply(body, dry_run=True)
        except ApiError as err:
            return GUARD in (err.status.message or "")
        return False

    eventually(refused, deadline=60.0, what="the agent guard refusing a dry run in kube-system")


def made_up_graph(namespace: str) -> dict[str, Any]:
    """A graph that does not exist: what a forged controller reference names."""
    meta = {"name": f"forged-{uuid.uuid4().hex[:6]}", "namespace": namespace}
    return {**graph(namespace, "x"), "metadata": {**meta, "uid": str(uuid.uuid4())}}


def role(namespace: str, name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    }


def binding(namespace: str, name: str, role_ref: dict[str, str], subject: dict[str, str]) -> dict:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": RBAC_GROUP, **role_ref},
        "subjects": [subject],
    }


def refused_by_guard(call: Callable[[], Any]) -> str:
    """The write is refused by the agent guard (not by RBAC); its message."""
    with pytest.raises(ApiError) as refused:
        call()
    message = refused.value.status.message or ""
    assert refused.value.status.code == 403, message
    assert GUARD in message, message
    return message


# -- the escalations of issue 41 item 3, each refused -----------------------------------------


def _bind_cluster_role_to_everyone(g: Guarded) -> Any:
    # The agent holds every right of its own ClusterRole in every namespace, so RBAC lets it
    # bind that role to anyone there.
    body = binding(
        g.tenant,
        "everyone",
        {"kind": "ClusterRole", "name": g.account},
        {"apiGroup": RBAC_GROUP, "kind": "Group", "name": "system:authenticated"},
    )
    body = owned(body, g.dgd)
    return g.agent.create(RoleBinding.from_dict(body))


def _bind_discovery_role_to_another_account(g: Guarded) -> Any:
    # The graph's discovery Role (it exists), bound to the namespace's default account.
    body = binding(
        g.tenant,
        "h-k8s-service-discovery-binding",
        {"kind": "Role", "name": "g-k8s-service-discovery-role"},
        {"kind": "ServiceAccount", "name": "default", "namespace": g.tenant},
    )
    return g.agent.create(RoleBinding.from_dict(owned(body, g.dgd)))


def _role_with_other_rules(g: Guarded) -> Any:
    # Rules the agent holds (so RBAC's escalation check passes) but no discovery Role has.
    rules = [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create", "patch"]}]
    body = role(g.tenant, "h-k8s-service-discovery-role", rules)
    return g.agent.create(Role.from_dict(owned(body, g.dgd)))


def _role_not_named_for_discovery(g: Guarded) -> Any:
    (_, discovery, _) = _identity(g.tenant, g.dgd)
    body = discovery.create_manifest()
    body["metadata"]["name"] = "reader"
    return g.agent.create(Role.from_dict(body))


def _deployment_in_kube_system(g: Guarded) -> Any:
    # Run as a controller's ServiceAccount that holds escalate and bind.
    body = deployment("kube-system", f"x-{uuid.uuid4().hex[:6]}")
    body["spec"]["template"]["spec"]["serviceAccountName"] = "clusterrole-aggregation-controller"
    return g.agent.create(Deployment.from_dict(owned(body, made_up_graph("kube-system"))))


def _deployment_in_the_release_namespace(g: Guarded) -> Any:
    # Pods running as the agent itself.
    body = deployment(g.release, f"x-{uuid.uuid4().hex[:6]}")
    body["spec"]["template"]["spec"]["serviceAccountName"] = g.account
    return g.agent.create(Deployment.from_dict(owned(body, made_up_graph(g.release))))


def _config_map_in_kube_system(g: Guarded) -> Any:
    body = {"metadata": {"name": f"x-{uuid.uuid4().hex[:6]}", "namespace": "kube-system"}}
    return g.agent.create(ConfigMap.from_dict(owned(body, made_up_graph("kube-system"))))


def _service_account_in_kube_public(g: Guarded) -> Any:
    body = {"metadata": {"name": "x-k8s-service-discovery", "namespace": "kube-public"}}
    return g.agent.create(ServiceAccount.from_dict(owned(body, made_up_graph("kube-public"))))


def _deployment_no_graph_controls(g: Guarded) -> Any:
    return g.agent.create(Deployment.from_dict(deployment(g.tenant, f"x-{uuid.uuid4().hex[:6]}")))


def _service_account_not_named_for_discovery(g: Guarded) -> Any:
    body = {"metadata": {"name": "builder", "namespace": g.tenant}}
    return g.agent.create(ServiceAccount.from_dict(owned(body, g.dgd)))


def _someone_elses_service_deleted(g: Guarded) -> Any:
    name = f"theirs-{uuid.uuid4().hex[:6]}"
    g.admin.create(Service.from_dict(service(g.tenant, name)))
    return g.agent.delete(Service, name, namespace=g.tenant)


def _someone_elses_service_taken_over(g: Guarded) -> Any:
    name = f"theirs-{uuid.uuid4().hex[:6]}"
    g.admin.create(Service.from_dict(service(g.tenant, name)))
    body = owned(service(g.tenant, name), g.dgd)
    return g.agent.apply(Service.from_dict(body), force=True)


def _graph_spec_edited(g: Guarded) -> Any:
    patch = {"spec": {"components": [{**graph(g.tenant, "g")["spec"]["components"][0]}]}}
    patch["spec"]["components"][0]["replicas"] = 5
    return g.agent.patch(DGD, "g", patch, namespace=g.tenant, patch_type=PatchType.MERGE)


def _another_lease(g: Guarded) -> Any:
    # RBAC cannot limit create to a name.
    body = {"metadata": {"name": "kube-scheduler", "namespace": g.release}, "spec": {}}
    return g.agent.create(Lease.from_dict(body))


ESCALATIONS: list[Callable[[Guarded], Any]] = [
    _bind_cluster_role_to_everyone,
    _bind_discovery_role_to_another_account,
    _role_with_other_rules,
    _role_not_named_for_discovery,
    _deployment_in_kube_system,
    _deployment_in_the_release_namespace,
    _config_map_in_kube_system,
    _service_account_in_kube_public,
    _deployment_no_graph_controls,
    _service_account_not_named_for_discovery,
    _someone_elses_service_deleted,
    _someone_elses_service_taken_over,
    _graph_spec_edited,
    _another_lease,
]


@pytest.mark.parametrize("escalation", ESCALATIONS, ids=lambda f: f.__name__.strip("_"))
def test_the_guard_refuses_each_escalation(
    guarded: Guarded, escalation: Callable[[Guarded], Any]
) -> None:
    message = refused_by_guard(lambda: escalation(guarded))
    # The refusal names the object (Kind/namespace/name) and says what to do.
    assert "docs/security.md" in message, message


def test_a_wildcard_role_is_refused(guarded: Guarded) -> None:
    # RBAC's own escalation check refuses it first (the agent holds no wildcard); the guard
    # would too.
    body = role(guarded.tenant, "g-k8s-service-discovery-role", [])
    body["rules"] = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    with pytest.raises(ApiError) as refused:
        guarded.agent.create(Role.from_dict(owned(body, guarded.dgd)))
    assert refused.value.status.code == 403


# -- what the agent writes still passes --------------------------------------------------------


def test_the_agents_own_writes_pass(guarded: Guarded) -> None:
    g = guarded
    for rendered in _identity(g.tenant, g.dgd):
        body = _IDENTITY_KINDS[rendered.kind].from_dict(rendered.create_manifest())
        made = g.agent.apply(body, field_manager=rendered.manager)
        assert made.metadata.ownerReferences[0].uid == g.dgd["metadata"]["uid"]
    dcd = g.agent.apply(DCD.from_dict(owned(component(g.tenant, "g-frontend"), g.dgd))).to_dict()
    workload = owned(deployment(g.tenant, "g-frontend"), dcd)
    g.agent.apply(Deployment.from_dict(workload))
    workload["spec"]["replicas"] = 3
    assert g.agent.apply(Deployment.from_dict(workload)).spec.replicas == 3
    status = {"apiVersion": g.dgd["apiVersion"], "kind": g.dgd["kind"], "metadata": {"name": "g"}}
    status["status"] = {"observedGeneration": 1}
    g.agent.patch(DGD.Status, "g", status, namespace=g.tenant, patch_type=PatchType.APPLY)
    # The graph's metadata (the upstream operator's finalizer, released) but not its spec.
    g.agent.patch(
        DGD, "g", {"metadata": {"finalizers": None}}, namespace=g.tenant, patch_type=PatchType.MERGE
    )
    event = {
        "metadata": {"name": f"g.{uuid.uuid4().hex[:8]}", "namespace": g.tenant},
        "involvedObject": {"kind": "DynamoGraphDeployment", "name": "g", "namespace": g.tenant},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
    }
    g.agent.create(Event.from_dict(event))
    lease = {"metadata": {"name": "syncagent", "namespace": g.release}, "spec": {}}
    g.agent.create(Lease.from_dict(lease))
    g.agent.delete(Deployment, "g-frontend", namespace=g.tenant)
    g.agent.delete(DCD, "g-frontend", namespace=g.tenant)


def test_a_forged_controller_reference_is_collected_with_its_missing_graph(
    guarded: Guarded,
) -> None:
    """What the guard cannot tell: a controller reference to a graph the token made up passes
    (in a reconciled namespace, of a kind the agent applies). The garbage collector removes
    such an object once it finds that graph missing (docs/security.md §2)."""
    g = guarded
    name = f"forged-{uuid.uuid4().hex[:6]}"
    body = owned(deployment(g.tenant, name), made_up_graph(g.tenant))
    g.agent.create(Deployment.from_dict(body))

    def gone() -> bool:
        try:
            g.admin.get(Deployment, name, namespace=g.tenant)
        except ApiError as err:
            return err.status.code == 404
        return False

    eventually(gone, deadline=60.0, what=f"the garbage collector removing {name}")


def test_the_guard_binds_only_the_agents_account(guarded: Guarded) -> None:
    """Anyone else's writes are no business of the guard: the admin's Deployment without a
    controller, in the same namespace, is admitted."""
    body = deployment(guarded.tenant, f"admin-{uuid.uuid4().hex[:6]}")
    assert guarded.admin.create(Deployment.from_dict(body)).metadata.uid


def test_a_dry_run_needs_no_controller_but_its_namespace_rule_holds(guarded: Guarded) -> None:
    """The agent dry-runs content before its create adds the owner reference; nothing is
    stored, so the guard admits it, but not in a namespace it would refuse."""
    name = f"dry-{uuid.uuid4().hex[:6]}"
    body = Deployment.from_dict(deployment(guarded.tenant, name))
    guarded.agent.apply(body, dry_run=True)
    forbidden_body = Deployment.from_dict(deployment("kube-system", name))
    refused_by_guard(lambda: guarded.agent.apply(forbidden_body, dry_run=True))


# -- the one spec write: an adapted component's replicas (docs/ownership.md §7) ------------------


def _adapted(g: Guarded) -> str:
    """A graph whose Frontend has a scaling adapter and a second component that has none."""
    name = f"a-{uuid.uuid4().hex[:6]}"
    body = graph(g.tenant, name)
    frontend = body["spec"]["components"][0]
    frontend["scalingAdapter"] = {}
    body["spec"]["components"].append({**frontend, "name": "other", "type": "worker"})
    del body["spec"]["components"][1]["scalingAdapter"]
    g.admin.create(DGD.from_dict(body))
    return name


def _replicas_patch(index: int, replicas: int, *more: dict[str, Any]) -> list[dict[str, Any]]:
    at = f"/spec/components/{index}"
    return [{"op": "add", "path": f"{at}/replicas", "value": replicas}, *more]


def test_the_agent_may_set_only_an_adapted_components_replicas(guarded: Guarded) -> None:
    g = guarded
    name = _adapted(g)

    def patch(ops: list[dict[str, Any]]) -> Any:
        return g.agent.patch(DGD, name, ops, namespace=g.tenant, patch_type=PatchType.JSON)

    scaled = patch(_replicas_patch(0, 4)).to_dict()
    assert scaled["spec"]["components"][0]["replicas"] == 4
    image = {"op": "add", "path": "/spec/components/0/podTemplate/spec/containers/0/image"}
    refused_by_guard(lambda: patch(_replicas_patch(0, 5, image | {"value": "img:2"})))
    refused_by_guard(lambda: patch(_replicas_patch(1, 3)))  # no adapter
    drop = {"op": "remove", "path": "/spec/components/0/scalingAdapter"}
    refused_by_guard(lambda: patch(_replicas_patch(0, 6, drop)))
    backend = {"op": "add", "path": "/spec/backendFramework", "value": "sglang"}
    refused_by_guard(lambda: patch(_replicas_patch(0, 7, backend)))
