"""The chart's adapted-replicas policy on a real API server (docs/ownership.md §7): a change of a
component's replicas while it has a scaling adapter is refused for everyone but the agent and
the planner's ServiceAccount (upstream's CanModifyDGDReplicas); other changes pass."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from syncagent.devcluster import ControlPlane
from tests.support.graphs import component, graph
from tests.support.helm import Helm
from tests.support.kube import DGD, Kube
from tests.support.polling import eventually

PLANNER = "planner-serviceaccount"
Change = Callable[[dict[str, Any]], None]


@contextlib.contextmanager
def _release(control_plane: ControlPlane, client: Client, tmp_path: Path) -> Iterator[str]:
    ns = f"ar-{uuid.uuid4().hex[:8]}"
    client.create(Namespace(metadata=ObjectMeta(name=ns)))
    helm = Helm(control_plane, tmp_path)
    try:
        helm.install(ns, ns, "crds.install=false", f"watchNamespaces={{{ns}}}")
        try:
            yield ns
        finally:
            helm.uninstall(ns, ns)
    finally:
        client.delete(Namespace, ns)


def _replicas(name: str, value: int) -> Change:
    def change(g: dict[str, Any]) -> None:
        (c,) = [c for c in g["spec"]["components"] if c["name"] == name]
        c["replicas"] = value

    return change


def _refusal(kube: Kube, ns: str, change: Change, *, user: str | None = None) -> str | None:
    """The refusal of a dry-run update of the graph ``g`` changed by ``change``, or None."""
    doc = kube.get(DGD, ns, "g")
    assert doc is not None
    change(doc)
    headers = {"Content-Type": "application/json"}
    if user:
        headers |= {"Impersonate-User": user, "Impersonate-Group": "system:serviceaccounts"}
    response = kube.http.request(
        "PUT",
        kube.path(DGD, ns, "g"),
        content=orjson.dumps(doc),
        headers=headers,
        params={"dryRun": "All"},
    )
    if response.status_code >= 400:
        return str(response.json().get("message"))
    return None


def _grant_planner(kube: Kube, ns: str) -> str:
    """The planner's ServiceAccount name, allowed by RBAC to update graphs in ``ns``."""
    rule = {"apiGroups": ["nvidia.com"], "resources": ["dynamographdeployments"]}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}
    kube.create(
        role
        | {"metadata": {"name": "planner", "namespace": ns}}
        | {"rules": [rule | {"verbs": ["get", "update"]}]}
    )
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "planner", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "planner"},
            "subjects": [{"kind": "ServiceAccount", "name": PLANNER, "namespace": ns}],
        }
    )
    return f"system:serviceaccount:{ns}:{PLANNER}"


def test_only_the_agent_and_the_planner_change_an_adapted_components_replicas(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path
) -> None:
    with _release(control_plane, client, tmp_path) as ns:
        kube.create(
            graph(
                ns,
                "g",
                [
                    component("Frontend", "frontend", replicas=1),
                    component("decode", "decode", replicas=2, scalingAdapter={}),
                ],
            )
        )
        refused = eventually(
            lambda: _refusal(kube, ns, _replicas("decode", 3)),
            deadline=60.0,
            what="the policy to refuse the replicas of decode",
        )
        # The API server puts its own words ("... denied request: ") before the policy's.
        expected = (
            f"denied request: DynamoGraphDeployment/{ns}/g: spec.components[].replicas of "
            "decode cannot be modified directly when scaling adapter is enabled"
        )
        assert expected in refused, refused
        assert "DynamoGraphDeploymentScalingAdapter" in refused
        # A component without an adapter, and any other field, stay the user's.
        assert _refusal(kube, ns, _replicas("Frontend", 4)) is None

        def label(g: dict[str, Any]) -> None:
            g["spec"]["components"][1].setdefault("labels", {})["x"] = "y"

        assert _refusal(kube, ns, label) is None

        # Removing the adapter with the same edit is still a change of adapted replicas.
        def drop_and_scale(g: dict[str, Any]) -> None:
            _replicas("decode", 5)(g)
            g["spec"]["components"][1].pop("scalingAdapter")

        assert _refusal(kube, ns, drop_and_scale) is not None
        assert _refusal(kube, ns, _replicas("decode", 2)) is None  # unchanged
        planner = _grant_planner(kube, ns)
        assert _refusal(kube, ns, _replicas("decode", 6), user=planner) is None


def test_a_user_may_set_the_replicas_the_component_already_has(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path
) -> None:
    with _release(control_plane, client, tmp_path) as ns:
        kube.create(
            graph(ns, "g", [component("decode", "decode", replicas=None, scalingAdapter={})])
        )
        eventually(
            lambda: _refusal(kube, ns, _replicas("decode", 2)),
            deadline=60.0,
            what="the policy to act",
        )
        # unset counts as 1, as upstream's ptr.Deref(replicas, 1)
        assert _refusal(kube, ns, _replicas("decode", 1)) is None
