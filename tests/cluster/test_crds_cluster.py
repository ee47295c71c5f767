"""Our generated CRDs on a real API server: established, lossless, and enforcing their rules."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx2
import pytest
from lightkube import ApiError, Client
from lightkube.generic_resource import create_namespaced_resource
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.types import PatchType

from syncagent.api import DynamoGraphDeployment
from syncagent.api.conversion import convert_documents
from syncagent.api.load import load_documents
from tests.support.graphs import main_container

REPO = Path(__file__).resolve().parents[2]
MANAGER = "crd-tests"

DGD = create_namespaced_resource(
    "nvidia.com", "v1beta1", "DynamoGraphDeployment", "dynamographdeployments"
)
DCD = create_namespaced_resource(
    "nvidia.com", "v1beta1", "DynamoComponentDeployment", "dynamocomponentdeployments"
)
DGD_ALPHA = create_namespaced_resource(
    "nvidia.com", "v1alpha1", "DynamoGraphDeployment", "dynamographdeployments"
)


def comp(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "podTemplate": {"spec": {"containers": [main_container()]}}, **fields}


def graph(name: str, *components: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"components": list(components), **spec},
    }


def apply(client: Client, body: dict[str, Any], namespace: str, *, manager: str = MANAGER) -> Any:
    resource = DGD if body["kind"] == "DynamoGraphDeployment" else DCD
    return client.apply(
        resource.from_dict(copy.deepcopy(body)), namespace=namespace, field_manager=manager
    )


def rejection(client: Client, body: dict[str, Any], namespace: str) -> str:
    with pytest.raises(ApiError) as info:
        apply(client, body, namespace)
    assert info.value.status.code == 422
    return str(info.value.status.message)


# Example 11 of spec/api.md §1: upstream fields we keep but do not interpret.
UPSTREAM = graph(
    "u",
    {
        "name": "Frontend",
        "type": "frontend",
        "frontendSidecar": "router",
        "providerOverride": {"apiVersion": "example.com/v1", "value": {"a": {"b": [1, 2]}}},
        "compilationCache": {"pvcName": "cache", "mountPath": "/cache"},
        "podTemplate": {
            "metadata": {"labels": {"team": "a"}},
            "spec": {
                "containers": [
                    main_container(env=[{"name": "A", "value": "1"}]),
                    {"name": "router", "image": "router:1"},
                ]
            },
        },
    },
    {
        "name": "epp",
        "type": "epp",
        "eppConfig": {"configMapRef": {"name": "epp-config", "key": "config.yaml"}},
        "topologyConstraint": {"packDomain": "rack"},
        "experimental": {
            "gpuMemoryService": {"deviceClassName": "gpu.nvidia.com"},
            "checkpoint": {
                "enabled": True,
                "checkpointRef": "ck1",
                "startupPolicy": "Immediate",
                "mode": "Manual",
            },
        },
        "podTemplate": {"spec": {"containers": [main_container()]}},
    },
    priorityClassName="high",
    experimental={"kvTransferPolicy": {"domain": "rack", "labelKey": "topology/rack"}},
    providerOverride={"apiVersion": "example.com/v1", "value": {"x": "y"}},
)
UPSTREAM["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}


def test_our_crds_are_established(client: Client) -> None:
    for name in ("dynamographdeployments.nvidia.com", "dynamocomponentdeployments.nvidia.com"):
        crd = client.get(CustomResourceDefinition, name)
        conditions = {c.type: c.status for c in crd.status.conditions}
        assert conditions["Established"] == "True"
        assert conditions["NamesAccepted"] == "True"
        assert crd.status.storedVersions == ["v1beta1"]


def test_v1alpha1_is_not_served(client: Client, namespace: str) -> None:
    # Not a Kubernetes Status body ("404 page not found"), so lightkube raises the HTTP error.
    with pytest.raises(httpx2.HTTPStatusError) as info:
        client.get(DGD_ALPHA, "anything", namespace=namespace)
    assert info.value.response.status_code == 404


def test_uninterpreted_upstream_fields_read_back_unchanged(client: Client, namespace: str) -> None:
    apply(client, UPSTREAM, namespace)
    live = client.get(DGD, "u", namespace=namespace).to_dict()
    assert live["spec"] == UPSTREAM["spec"]
    assert live["metadata"]["annotations"] == UPSTREAM["metadata"]["annotations"]
    # And the model keeps them too.
    assert DynamoGraphDeployment.from_dict(live).to_dict()["spec"] == UPSTREAM["spec"]


def test_containers_merge_by_name_under_ssa(client: Client, namespace: str) -> None:
    apply(client, UPSTREAM, namespace)
    other = graph(
        "u",
        {
            "name": "Frontend",
            "podTemplate": {
                "spec": {"containers": [{"name": "main", "env": [{"name": "B", "value": "2"}]}]}
            },
        },
    )
    apply(client, other, namespace, manager="someone-else")
    live = client.get(DGD, "u", namespace=namespace).to_dict()
    frontend = next(c for c in live["spec"]["components"] if c["name"] == "Frontend")
    containers = frontend["podTemplate"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["main", "router"]
    assert containers[0]["image"] == "img:1"
    assert containers[0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert len(live["spec"]["components"]) == 2


def test_crd_defaults(client: Client, namespace: str) -> None:
    body = graph(
        "d",
        comp("decode", multinode={}, experimental={"checkpoint": {"enabled": False}}),
    )
    apply(client, body, namespace)
    live = client.get(DGD, "d", namespace=namespace).to_dict()
    decode = live["spec"]["components"][0]
    assert decode["multinode"] == {"nodeCount": 2}
    assert decode["experimental"]["checkpoint"]["startupPolicy"] == "Immediate"
    assert "replicas" not in decode
    # spec.restart may be set after creation; its strategy type defaults to Sequential.
    apply(
        client,
        {**body, "spec": {**body["spec"], "restart": {"id": "r1", "strategy": {}}}},
        namespace,
    )
    live = client.get(DGD, "d", namespace=namespace).to_dict()
    assert live["spec"]["restart"] == {"id": "r1", "strategy": {"type": "Sequential"}}


def test_status_subresource_and_state_default(client: Client, namespace: str) -> None:
    apply(client, graph("s", comp("a")), namespace)
    status = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "s"},
        "status": {"observedGeneration": 1, "routing": {"pathway": "Component"}},
    }
    client.patch(
        DGD.Status,
        "s",
        status,
        namespace=namespace,
        patch_type=PatchType.APPLY,
        field_manager="status-test",
    )
    live = client.get(DGD, "s", namespace=namespace).to_dict()
    assert live["status"] == {
        "observedGeneration": 1,
        "routing": {"pathway": "Component"},
        "state": "initializing",
    }


def test_dcd_accepts_a_component_and_keeps_unknown_fields(client: Client, namespace: str) -> None:
    body = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "u-frontend"},
        "spec": {
            "backendFramework": "vllm",
            "name": "Frontend",
            "type": "frontend",
            "frontendSidecar": "router",
            "podTemplate": {"spec": {"containers": [main_container()]}},
        },
    }
    apply(client, body, namespace)
    live = client.get(DCD, "u-frontend", namespace=namespace).to_dict()
    assert live["spec"] == body["spec"]


def example_graphs() -> list[Path]:
    return sorted((REPO / "examples").glob("*.yaml"))


def test_there_are_example_graphs() -> None:
    assert len(example_graphs()) >= 3


@pytest.mark.parametrize("path", example_graphs(), ids=lambda p: p.name)
def test_example_graph_is_accepted(client: Client, namespace: str, path: Path) -> None:
    docs = load_documents(path.read_text(), source=str(path))
    graphs = [d for d in docs if d.get("kind") == "DynamoGraphDeployment"]
    assert graphs, f"{path.name} has no DynamoGraphDeployment"
    for body in graphs:
        apply(client, body, namespace)
        live = client.get(DGD, body["metadata"]["name"], namespace=namespace).to_dict()
        assert [c["name"] for c in live["spec"]["components"]] == [
            c["name"] for c in body["spec"]["components"]
        ]


# -- rules the server enforces (spec/api.md §1.4, Server = yes/part, and server-only rules) ---


def test_duplicate_component_names_are_rejected(client: Client, namespace: str) -> None:
    message = rejection(client, graph("dup", comp("Decode"), comp("decode")), namespace)
    assert "component names must be unique case-insensitively" in message
    # An exact duplicate is already a list-map key clash: a create is refused as invalid...
    body = graph("dup", comp("decode"), comp("decode"))
    with pytest.raises(ApiError) as info:
        client.create(DGD.from_dict(copy.deepcopy(body)), namespace=namespace)
    assert info.value.status.code == 422
    assert 'spec.components[1]: Duplicate value: {"name":"decode"}' in str(
        info.value.status.message
    )
    # ...and an apply cannot even be merged (the API server answers 500 for that).
    with pytest.raises(ApiError) as info:
        apply(client, body, namespace)
    assert 'duplicate entries for key [name="decode"]' in str(info.value.status.message)


def test_negative_replicas_are_rejected(client: Client, namespace: str) -> None:
    message = rejection(client, graph("neg", comp("a", replicas=-1)), namespace)
    assert "spec.components[0].replicas" in message
    assert "should be greater than or equal to 0" in message


@pytest.mark.parametrize(
    ("components", "expected"),
    [
        ([comp(f"c{i}") for i in range(26)], "Too many: 26: must have at most 25 items"),
        ([comp("bad_name")], "spec.components[0].name"),
        ([comp("x" * 64)], "spec.components[0].name"),
        ([comp("a", type="epp"), comp("b", type="epp")], "at most one component may have type epp"),
        (
            [
                {
                    "name": "a",
                    "podTemplate": {"spec": {"containers": [main_container(), {"name": "s"}]}},
                }
            ],
            "sidecar containers must specify a non-empty image",
        ),
        ([comp("a", multinode={"nodeCount": 1})], "spec.components[0].multinode.nodeCount"),
        ([comp("a", sharedMemorySize="lots")], "spec.components[0].sharedMemorySize"),
        ([comp("a", modelRef={"name": ""})], "spec.components[0].modelRef.name"),
        ([comp("a", modelRef={"revision": "r"})], "spec.components[0].modelRef.name: Required"),
        (
            [
                comp(
                    "a",
                    experimental={"checkpoint": {"enabled": True, "checkpointRef": "c", "job": {}}},
                )
            ],
            "checkpoint.job cannot be set when checkpointRef is specified",
        ),
        (
            [comp("a", eppConfig={"configMapRef": {"name": "c"}})],
            "eppConfig may only be set when type is epp",
        ),
        (
            [comp("a", replicas=1, minAvailable=2)],
            "minAvailable must be less than or equal to replicas unless replicas is 0",
        ),
        ([comp("a", type="router")], "spec.components[0].type"),
    ],
)
def test_server_enforced_rules(
    client: Client, namespace: str, components: list, expected: str
) -> None:
    assert expected in rejection(client, graph("bad", *components), namespace)


def test_rules_only_the_agent_enforces_are_accepted(client: Client, namespace: str) -> None:
    # V5: no main container (spec/api.md §1 example 3); V10: checkpoint without a ref.
    sidecar_only = {
        "name": "a",
        "podTemplate": {"spec": {"containers": [{"name": "sidecar", "image": "x"}]}},
    }
    no_ref = comp("b", experimental={"checkpoint": {"enabled": True}})
    apply(client, graph("agent-side", sidecar_only, no_ref), namespace)
    assert (
        client.get(DGD, "agent-side", namespace=namespace).to_dict()["spec"]["components"][0]
        == sidecar_only
    )


def test_restart_on_create_is_rejected(client: Client, namespace: str) -> None:
    message = rejection(client, graph("r", comp("a"), restart={"id": "r1"}), namespace)
    assert "spec.restart must be unset on create" in message


def test_min_available_is_immutable(client: Client, namespace: str) -> None:
    apply(client, graph("m", comp("a", replicas=3, minAvailable=2)), namespace)
    message = rejection(client, graph("m", comp("a", replicas=3, minAvailable=1)), namespace)
    assert "minAvailable is immutable after creation" in message
    assert rejection(client, graph("m", comp("a", replicas=3)), namespace)
    apply(client, graph("m", comp("a", replicas=0, minAvailable=2)), namespace)


def test_converted_v1alpha1_graph_is_accepted(client: Client, namespace: str) -> None:
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "converted"},
        "spec": {
            "envs": [{"name": "LOG", "value": "debug"}],
            "services": {
                "decode": {
                    "componentType": "worker",
                    "subComponentType": "decode",
                    "multinode": {"nodeCount": 2},
                    "resources": {"limits": {"gpu": "8", "custom": {"rdma/ib": "8"}}},
                    "volumeMounts": [{"name": "model-cache", "mountPoint": "/model-cache"}],
                    "sharedMemory": {"size": "80Gi"},
                    "extraPodSpec": {"mainContainer": {"image": "img:1", "args": ["--x"]}},
                },
                "Frontend": {
                    "componentType": "frontend",
                    "envFromSecret": "hf-token",
                    "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}},
                    "extraPodSpec": {"mainContainer": {"image": "img:1"}},
                },
            },
        },
    }
    converted = convert_documents([alpha]).documents[0]
    apply(client, converted, namespace)
    live = client.get(DGD, "converted", namespace=namespace).to_dict()
    assert live["spec"] == converted["spec"]
