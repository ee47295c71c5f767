"""The API models: sparse output, unknown fields kept, helper accessors."""

from __future__ import annotations

import copy

from syncagent.api import (
    Component,
    ComponentReplicaStatus,
    Condition,
    DynamoCheckpoint,
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    GraphSpec,
    GraphStatus,
    Multinode,
    ObjectMeta,
    RestartStatus,
    RoutingStatus,
    checkpoint_ready,
)

UPSTREAM_GRAPH = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {
        "name": "u",
        "namespace": "ns",
        "annotations": {"nvidia.com/enable-grove": "false"},
    },
    "spec": {
        "priorityClassName": "high",
        "experimental": {"kvTransferPolicy": {"domain": "rack"}},
        "components": [
            {
                "name": "Frontend",
                "type": "frontend",
                "frontendSidecar": "router",
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "img:1"},
                            {"name": "router", "image": "router:1"},
                        ]
                    }
                },
            },
            {
                "name": "epp",
                "type": "epp",
                "eppConfig": {"configMapRef": {"name": "epp-config", "key": "config.yaml"}},
                "providerOverride": {"apiVersion": "x/v1", "value": {"a": 1}},
                "experimental": {
                    "gpuMemoryService": {"deviceClassName": "gpu.nvidia.com"},
                    "checkpoint": {"enabled": True, "checkpointRef": "ck1", "mode": "Manual"},
                },
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1"}]}},
            },
        ],
    },
}


def test_unknown_fields_survive_a_round_trip() -> None:
    graph = DynamoGraphDeployment.from_dict(copy.deepcopy(UPSTREAM_GRAPH))
    assert graph.to_dict() == UPSTREAM_GRAPH
    assert graph.spec.model_extra == {
        "priorityClassName": "high",
        "experimental": {"kvTransferPolicy": {"domain": "rack"}},
    }
    assert graph.spec.components[0].model_extra == {"frontendSidecar": "router"}


def test_interpreted_fields_are_typed() -> None:
    graph = DynamoGraphDeployment.from_dict(copy.deepcopy(UPSTREAM_GRAPH))
    epp = graph.spec.components[1]
    assert epp.epp_config == {"configMapRef": {"name": "epp-config", "key": "config.yaml"}}
    assert epp.checkpoint is not None
    assert epp.checkpoint.checkpoint_ref == "ck1"
    assert epp.checkpoint.startup_policy == "Immediate"  # the CRD default, not emitted
    assert (
        "startupPolicy"
        not in graph.to_dict()["spec"]["components"][1]["experimental"]["checkpoint"]
    )
    assert graph.ref == "DynamoGraphDeployment/ns/u"


def test_models_built_in_code_are_sparse() -> None:
    graph = DynamoGraphDeployment(
        metadata=ObjectMeta(name="x", namespace="ns"),
        spec=GraphSpec(components=[Component(name="decode", replicas=2)]),
    )
    assert graph.to_dict() == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {"components": [{"name": "decode", "replicas": 2}]},
    }


def test_explicit_none_is_never_emitted() -> None:
    comp = Component(name="a", replicas=None, multinode=None, type=None)
    assert comp.to_dict() == {"name": "a"}


def test_snake_case_and_camel_case_both_parse() -> None:
    a = Component.model_validate({"name": "a", "globalDynamoNamespace": True})
    b = Component(name="a", global_dynamo_namespace=True)
    assert a.global_dynamo_namespace is b.global_dynamo_namespace is True
    assert a.to_dict() == b.to_dict() == {"name": "a", "globalDynamoNamespace": True}


def test_component_helpers() -> None:
    comp = Component.model_validate(
        {
            "name": "Decode",
            "type": "decode",
            "multinode": {},
            "podTemplate": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "containers": [{"name": "side", "image": "s"}, {"name": "main", "image": "m"}]
                },
            },
        }
    )
    assert comp.lower_name == "decode"
    assert comp.effective_replicas == 1
    assert comp.is_multinode
    assert comp.node_count == 2  # CRD default of multinode.nodeCount
    assert comp.is_worker_type
    assert comp.main_container() == {"name": "main", "image": "m"}
    assert [c["name"] for c in comp.sidecars()] == ["side"]
    assert comp.pod_metadata == {"labels": {"a": "b"}}
    assert comp.to_dict()["multinode"] == {}


def test_single_node_and_empty_component() -> None:
    comp = Component(name="f", replicas=0, multinode=Multinode(node_count=1))
    assert not comp.is_multinode
    assert comp.node_count == 1
    assert comp.effective_replicas == 0
    assert comp.main_container() is None
    assert comp.containers() == []


def test_status_serialises_with_wire_names() -> None:
    status = GraphStatus(
        observed_generation=3,
        state="successful",
        conditions=[
            Condition(type="Ready", status="True", reason="all_resources_are_ready", message="ok")
        ],
        components={
            "frontend": ComponentReplicaStatus(
                component_kind="Deployment",
                component_names=["x-frontend"],
                runtime_namespace="ns-x",
                replicas=1,
                updated_replicas=1,
            )
        },
        restart=RestartStatus(observed_id="r1", phase="Restarting", in_progress=["a"]),
        routing=RoutingStatus(pathway="Component"),
    )
    assert status.to_dict() == {
        "observedGeneration": 3,
        "state": "successful",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "all_resources_are_ready",
                "message": "ok",
            }
        ],
        "components": {
            "frontend": {
                "componentKind": "Deployment",
                "componentNames": ["x-frontend"],
                "runtimeNamespace": "ns-x",
                "replicas": 1,
                "updatedReplicas": 1,
            }
        },
        "restart": {"observedID": "r1", "phase": "Restarting", "inProgress": ["a"]},
        "routing": {"pathway": "Component"},
    }
    ready = status.condition("Ready")
    assert ready is not None
    assert ready.is_true


def test_routing_without_annotation_omits_the_key() -> None:
    assert "groveAnnotation" not in RoutingStatus(pathway="Grove").to_dict()
    assert RoutingStatus(pathway="Grove", grove_annotation="true").to_dict() == {
        "pathway": "Grove",
        "groveAnnotation": "true",
    }


def test_dcd_name_and_parent() -> None:
    dcd = DynamoComponentDeployment.from_dict(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoComponentDeployment",
            "metadata": {
                "name": "x-decode",
                "ownerReferences": [
                    {
                        "apiVersion": "nvidia.com/v1beta1",
                        "kind": "DynamoGraphDeployment",
                        "name": "x",
                        "uid": "u1",
                        "controller": True,
                    }
                ],
            },
            "spec": {"backendFramework": "vllm", "type": "decode"},
        }
    )
    assert dcd.component_name == "x-decode"
    assert dcd.parent_graph_name == "x"
    assert dcd.spec.backend_framework == "vllm"
    controller = dcd.metadata.controller_ref()
    assert controller is not None
    assert controller.uid == "u1"
    orphan = DynamoComponentDeployment(metadata=ObjectMeta(name="solo"))
    assert orphan.parent_graph_name == "solo"
    assert orphan.to_dict() == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "solo"},
    }


def test_dcd_spec_has_no_provider_override_field_but_keeps_it_as_extra() -> None:
    dcd = DynamoComponentDeployment.from_dict(
        {"metadata": {"name": "d"}, "spec": {"name": "d", "providerOverride": {"x": 1}}}
    )
    assert dcd.spec.model_extra == {"providerOverride": {"x": 1}}


def test_checkpoint_readiness() -> None:
    def ck(phase: str | None) -> DynamoCheckpoint:
        body = {"metadata": {"name": "ck1"}}
        return DynamoCheckpoint.from_dict({**body, "status": {"phase": phase}} if phase else body)

    assert checkpoint_ready(ck("Ready"))
    assert not checkpoint_ready(ck("Creating"))
    assert not checkpoint_ready(ck(None))
    assert not checkpoint_ready(None)
    assert ck("Ready").to_dict()["apiVersion"] == "nvidia.com/v1alpha1"


def test_metadata_helpers() -> None:
    meta = ObjectMeta.model_validate(
        {
            "name": "a",
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"k": "v"},
            "managedFields": [{"manager": "m"}],
        }
    )
    assert meta.being_deleted
    assert meta.label("k") == "v"
    assert meta.annotation("k") is None
    assert meta.to_dict()["managedFields"] == [{"manager": "m"}]
