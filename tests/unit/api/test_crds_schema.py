"""Our generated CRDs have the shape spec/api.md §1.1 and §1.4 require."""

from __future__ import annotations

import json
from typing import Any

import pytest

from syncagent.api import crdgen
from syncagent.cli.main import main
from syncagent.cli.pathways import PROGRAMS


@pytest.fixture(scope="module")
def dgd() -> dict[str, Any]:
    return crdgen.graph_crd(pathways=PROGRAMS.pathways)


@pytest.fixture(scope="module")
def dcd() -> dict[str, Any]:
    return crdgen.component_crd()


def version(crd: dict[str, Any], name: str) -> dict[str, Any]:
    return next(v for v in crd["spec"]["versions"] if v["name"] == name)


def schema(crd: dict[str, Any]) -> dict[str, Any]:
    return version(crd, "v1beta1")["schema"]["openAPIV3Schema"]


def rules(node: dict[str, Any]) -> list[str]:
    return [v["message"] for v in node.get("x-kubernetes-validations", [])]


def test_names_scope_and_conversion(dgd, dcd) -> None:
    assert dgd["metadata"]["name"] == "dynamographdeployments.nvidia.com"
    assert dgd["spec"]["names"]["shortNames"] == ["dgd"]
    assert dcd["metadata"]["name"] == "dynamocomponentdeployments.nvidia.com"
    assert dcd["spec"]["names"]["shortNames"] == ["dcd"]
    for crd in (dgd, dcd):
        assert crd["spec"]["group"] == "nvidia.com"
        assert crd["spec"]["scope"] == "Namespaced"
        assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_versions(dgd, dcd) -> None:
    for crd in (dgd, dcd):
        alpha = version(crd, "v1alpha1")
        assert (alpha["served"], alpha["storage"]) == (False, False)
        assert alpha["schema"]["openAPIV3Schema"] == {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
        beta = version(crd, "v1beta1")
        assert (beta["served"], beta["storage"]) == (True, True)
        assert beta["subresources"] == {"status": {}}


def test_printer_columns(dgd, dcd) -> None:
    def cols(crd):
        return [
            (c["name"], c.get("jsonPath"))
            for c in version(crd, "v1beta1")["additionalPrinterColumns"]
        ]

    assert cols(dgd) == [
        ("Ready", '.status.conditions[?(@.type=="Ready")].status'),
        ("Backend", ".spec.backendFramework"),
        ("Age", ".metadata.creationTimestamp"),
    ]
    assert cols(dcd) == [
        ("Available", ".status.conditions[?(@.type=='Available')].status"),
        ("Backend", ".spec.backendFramework"),
        ("Age", ".metadata.creationTimestamp"),
    ]


def test_graph_spec(dgd) -> None:
    spec = schema(dgd)["properties"]["spec"]
    assert spec["x-kubernetes-preserve-unknown-fields"] is True
    assert rules(spec) == [
        "spec.restart must be unset on create; set spec.restart.id after creation to request a "
        "restart"
    ]
    assert spec["properties"]["backendFramework"]["enum"] == ["sglang", "vllm", "trtllm"]
    restart = spec["properties"]["restart"]
    assert restart["required"] == ["id"]
    assert restart["properties"]["id"]["minLength"] == 1
    strategy = restart["properties"]["strategy"]["properties"]["type"]
    assert (strategy["enum"], strategy["default"]) == (["Sequential", "Parallel"], "Sequential")
    env = spec["properties"]["env"]
    assert env["items"]["required"] == ["name"]
    assert "valueFrom" in env["items"]["properties"]


def test_components_list(dgd) -> None:
    comps = schema(dgd)["properties"]["spec"]["properties"]["components"]
    assert comps["maxItems"] == 25
    assert comps["x-kubernetes-list-type"] == "map"
    assert comps["x-kubernetes-list-map-keys"] == ["name"]
    assert rules(comps) == [
        "at most one component may have type epp",
        "component names must be unique case-insensitively",
    ]


def component_item(crd: dict[str, Any]) -> dict[str, Any]:
    spec = schema(crd)["properties"]["spec"]
    return spec["properties"]["components"]["items"] if "components" in spec["properties"] else spec


@pytest.mark.parametrize("which", ["dgd", "dcd"])
def test_component_fields(which, request) -> None:
    item = component_item(request.getfixturevalue(which))
    props = item["properties"]
    assert item["x-kubernetes-preserve-unknown-fields"] is True
    assert rules(item) == [
        "eppConfig may only be set when type is epp",
        "minAvailable must be less than or equal to replicas unless replicas is 0",
        "minAvailable is immutable after creation",
    ]
    name = props["name"]
    assert (name["minLength"], name["maxLength"]) == (1, 63)
    assert name["pattern"] == "^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$"
    assert props["type"]["enum"] == ["frontend", "worker", "prefill", "decode", "planner", "epp"]
    assert props["replicas"]["minimum"] == 0
    assert "default" not in props["replicas"]
    node_count = props["multinode"]["properties"]["nodeCount"]
    assert (node_count["minimum"], node_count["default"]) == (2, 2)
    assert props["minAvailable"]["minimum"] == 1
    assert props["modelRef"]["required"] == ["name"]
    assert props["modelRef"]["properties"]["name"]["minLength"] == 1
    assert props["sharedMemorySize"]["x-kubernetes-int-or-string"] is True
    assert "pattern" in props["sharedMemorySize"]
    opaque = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert props["eppConfig"] == opaque
    assert props["scalingAdapter"] == opaque
    experimental = props["experimental"]
    assert experimental["x-kubernetes-preserve-unknown-fields"] is True
    checkpoint = experimental["properties"]["checkpoint"]
    assert checkpoint["x-kubernetes-preserve-unknown-fields"] is True
    assert checkpoint["required"] == ["enabled"]
    assert checkpoint["properties"]["startupPolicy"]["default"] == "Immediate"
    assert checkpoint["properties"]["job"] == opaque
    assert rules(checkpoint) == ["checkpoint.job cannot be set when checkpointRef is specified"]
    assert "providerOverride" not in props  # kept through preserve-unknown, never interpreted


@pytest.mark.parametrize("which", ["dgd", "dcd"])
def test_pod_template_is_structural_with_list_maps(which, request) -> None:
    template = component_item(request.getfixturevalue(which))["properties"]["podTemplate"]
    pod = template["properties"]["spec"]
    containers = pod["properties"]["containers"]
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["items"]["required"] == ["name"]
    assert rules(containers["items"]) == ["sidecar containers must specify a non-empty image"]
    container = containers["items"]["properties"]
    ports = container["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["items"]["properties"]["protocol"]["default"] == "TCP"
    assert container["env"]["x-kubernetes-list-map-keys"] == ["name"]
    assert pod["properties"]["volumes"]["x-kubernetes-list-map-keys"] == ["name"]
    limits = container["resources"]["properties"]["limits"]["additionalProperties"]
    assert limits["x-kubernetes-int-or-string"] is True
    port = container["livenessProbe"]["properties"]["httpGet"]["properties"]["port"]
    assert port["x-kubernetes-int-or-string"] is True
    assert set(template["properties"]["metadata"]["properties"]) == {
        "annotations",
        "finalizers",
        "labels",
        "name",
        "namespace",
    }
    text = json.dumps(template)
    assert '"description"' not in text
    assert "$ref" not in text
    assert "x-kubernetes-patch" not in text


def test_graph_status(dgd) -> None:
    status = schema(dgd)["properties"]["status"]
    props = status["properties"]
    assert props["state"]["default"] == "initializing"
    assert props["state"]["enum"] == ["initializing", "pending", "successful", "failed"]
    assert props["conditions"]["x-kubernetes-list-map-keys"] == ["type"]
    replica = props["components"]["additionalProperties"]
    assert replica["required"] == ["componentKind", "replicas", "updatedReplicas"]
    assert "observedID" in props["restart"]["properties"]
    # every pathway of the registry, in its precedence order (the fallback last)
    assert props["routing"]["properties"]["pathway"]["enum"] == list(PROGRAMS.pathways)
    assert set(props["checkpoints"]["additionalProperties"]["properties"]) == {
        "checkpointName",
        "ready",
    }
    assert "rollingUpdate" not in props
    assert "placement" not in props


def test_dcd_spec_and_status(dcd) -> None:
    root = schema(dcd)
    assert root["properties"]["spec"]["properties"]["backendFramework"]["enum"] == [
        "sglang",
        "vllm",
        "trtllm",
    ]
    assert "required" not in root["properties"]["spec"]  # a user DCD may leave spec.name empty
    status = root["properties"]["status"]["properties"]
    assert set(status) == {"observedGeneration", "conditions", "component"}


def test_generation_is_deterministic() -> None:
    pathways = ("A", "B")
    assert crdgen.rendered_files(pathways=pathways) == crdgen.rendered_files(pathways=pathways)


def test_cli_prints_every_crd(capsys) -> None:
    assert main(["crds", "-o", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [c["spec"]["names"]["kind"] for c in body["items"]] == [
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "DynamoCheckpoint",
        "DynamoGraphDeploymentScalingAdapter",
    ]
    assert main(["crds"]) == 0
    out = capsys.readouterr().out
    assert out.count("kind: CustomResourceDefinition") == 4


def test_cli_writes_files(tmp_path, capsys) -> None:
    assert main(["crds", "--dir", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "nvidia.com_dynamocheckpoints.yaml",
        "nvidia.com_dynamocomponentdeployments.yaml",
        "nvidia.com_dynamographdeployments.yaml",
        "nvidia.com_dynamographdeploymentscalingadapters.yaml",
    ]
