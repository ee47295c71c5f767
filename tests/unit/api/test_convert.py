"""spec/api.md §3: offline v1alpha1 -> v1beta1 conversion, library and CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from syncagent.api.conversion import ConversionError, convert_documents
from syncagent.cli.main import main

HOPPER = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: vllm-dsr1
spec:
  backendFramework: vllm
  pvcs:
    - name: model-cache
      create: false
  services:
    prefill:
      componentType: worker
      subComponentType: prefill
      replicas: 1
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0
    decode:
      componentType: worker
      subComponentType: decode
      replicas: 1
      multinode:
        nodeCount: 2
      resources:
        limits:
          gpu: "8"
          custom:
            rdma/ib: "8"
      volumeMounts:
        - name: model-cache
          mountPoint: /model-cache
      sharedMemory:
        size: 80Gi
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0
          workingDir: /workspace/dynamo
          env:
            - name: VLLM_USE_DEEP_GEMM
              value: "1"
    Frontend:
      componentType: frontend
      replicas: 1
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0
"""


def alpha(services: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"services": services, **spec},
    }


def with_image(service: dict[str, Any]) -> dict[str, Any]:
    extra = service.setdefault("extraPodSpec", {})
    extra.setdefault("mainContainer", {}).setdefault("image", "img:1")
    return service


def convert_one(services: dict[str, Any], **spec: Any) -> tuple[dict[str, Any], list[str]]:
    result = convert_documents([alpha(services, **spec)])
    assert result.converted == 1
    return result.documents[0], result.warnings


def component(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in doc["spec"]["components"] if c["name"] == name)


def main_of(comp: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in comp["podTemplate"]["spec"]["containers"] if c["name"] == "main")


def test_example_1_hopper_decode() -> None:
    result = convert_documents(list(yaml.safe_load_all(HOPPER)))
    doc = result.documents[0]
    decode = component(doc, "decode")
    assert {k: v for k, v in decode.items() if k != "podTemplate"} == {
        "name": "decode",
        "type": "decode",
        "replicas": 1,
        "multinode": {"nodeCount": 2},
        "sharedMemorySize": "80Gi",
    }
    main = main_of(decode)
    assert main["image"] == "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0"
    assert main["resources"]["limits"] == {"nvidia.com/gpu": "8", "rdma/ib": "8"}
    assert main["env"] == [{"name": "VLLM_USE_DEEP_GEMM", "value": "1"}]
    assert main["workingDir"] == "/workspace/dynamo"
    assert main["volumeMounts"] == [{"name": "model-cache", "mountPath": "/model-cache"}]
    assert decode["podTemplate"]["spec"]["volumes"] == [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": "model-cache"}}
    ]


def test_example_2_sorted_components_pvcs_dropped_silently() -> None:
    result = convert_documents(list(yaml.safe_load_all(HOPPER)))
    doc = result.documents[0]
    assert doc["apiVersion"] == "nvidia.com/v1beta1"
    assert doc["metadata"] == {"name": "vllm-dsr1"}
    assert [c["name"] for c in doc["spec"]["components"]] == ["Frontend", "decode", "prefill"]
    assert doc["spec"]["backendFramework"] == "vllm"
    assert "pvcs" not in doc["spec"]
    assert "services" not in doc["spec"]
    assert result.warnings == []
    annotations = doc["metadata"].get("annotations", {})
    assert "nvidia.com/dgd-spec" not in annotations


def test_example_3_worker_subtype() -> None:
    doc, _ = convert_one({"p": {"componentType": "worker", "subComponentType": "prefill"}})
    assert component(doc, "p")["type"] == "prefill"


def test_component_types_and_unknown_type() -> None:
    doc, warnings = convert_one(
        {
            "a": {"componentType": "planner"},
            "b": {"componentType": "main"},
            "c": {"componentType": "frontend", "subComponentType": "decode"},
            "d": {"componentType": "worker"},
        }
    )
    assert component(doc, "a")["type"] == "planner"
    assert "type" not in component(doc, "b")
    assert component(doc, "c")["type"] == "frontend"
    assert component(doc, "d")["type"] == "worker"
    assert warnings == [
        'warning: spec.services.b.componentType dropped: "main" is not a v1beta1 component type',
        "warning: spec.services.c.subComponentType dropped: subComponentType applies only to "
        "workers",
    ]


def test_example_4_gpu_type() -> None:
    doc, _ = convert_one(
        {
            "w": with_image(
                {"resources": {"limits": {"gpu": "2", "gpuType": "nvidia.com/mig-1g.10gb"}}}
            )
        }
    )
    assert main_of(component(doc, "w"))["resources"] == {"limits": {"nvidia.com/mig-1g.10gb": "2"}}


def test_resources_cpu_memory_custom_claims_and_main_wins() -> None:
    service = {
        "resources": {
            "requests": {"cpu": "2", "memory": "4Gi", "gpu": "1"},
            "limits": {"cpu": "4", "custom": {"x/y": "1"}},
            "claims": [{"name": "gpu"}],
        },
        "extraPodSpec": {"mainContainer": {"image": "i", "resources": {"limits": {"cpu": "8"}}}},
    }
    doc, _ = convert_one({"w": service})
    assert main_of(component(doc, "w"))["resources"] == {
        "requests": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"},
        "limits": {"cpu": "8", "x/y": "1"},
        "claims": [{"name": "gpu"}],
    }


def test_example_5_shared_memory_disabled() -> None:
    doc, _ = convert_one({"a": {"sharedMemory": {"disabled": True, "size": "1Gi"}}})
    assert component(doc, "a")["sharedMemorySize"] == "0"


def test_example_6_ingress_dropped_with_warning() -> None:
    doc, warnings = convert_one(
        {"Frontend": {"componentType": "frontend", "ingress": {"enabled": True}}}
    )
    assert "ingress" not in component(doc, "Frontend")
    assert warnings == ["warning: spec.services.Frontend.ingress dropped: out of scope"]


def test_dropped_fields_and_pvc_creation() -> None:
    doc, warnings = convert_one(
        {"a": {"dynamoNamespace": "x", "serviceName": "s", "autoscaling": {"enabled": True}}},
        pvcs=[{"name": "keep", "create": False}, {"name": "new", "create": True, "size": "1Gi"}],
    )
    assert set(component(doc, "a")) == {"name"}
    assert warnings == [
        "warning: spec.pvcs[1] dropped: PVC creation is not supported",
        "warning: spec.services.a.dynamoNamespace dropped: deprecated",
        "warning: spec.services.a.serviceName dropped: deprecated",
        "warning: spec.services.a.autoscaling dropped: deprecated and ignored upstream",
    ]


def test_same_name_and_experimental_fields() -> None:
    service = {
        "componentType": "epp",
        "replicas": 2,
        "globalDynamoNamespace": True,
        "modelRef": {"name": "m"},
        "minAvailable": 1,
        "eppConfig": {"configMapRef": {"name": "c", "key": "k"}},
        "frontendSidecar": "router",
        "topologyConstraint": {"packDomain": "rack"},
        "runtimeVersionOverride": "1.2.3",
        "providerOverride": {"apiVersion": "a/v1", "value": {}},
        "checkpoint": {"enabled": True, "checkpointRef": "ck"},
        "gpuMemoryService": {"enabled": True},
        "failover": {"mode": "IntraPod"},
        "scalingAdapter": {"enabled": True},
    }
    doc, warnings = convert_one({"e": service})
    comp = component(doc, "e")
    for key in (
        "replicas",
        "globalDynamoNamespace",
        "modelRef",
        "minAvailable",
        "eppConfig",
        "frontendSidecar",
        "topologyConstraint",
        "runtimeVersionOverride",
        "providerOverride",
    ):
        assert comp[key] == service[key], key
    assert comp["experimental"] == {
        "checkpoint": {"enabled": True, "checkpointRef": "ck"},
        "gpuMemoryService": {"enabled": True},
        "failover": {"mode": "IntraPod"},
    }
    assert comp["scalingAdapter"] == {}
    assert warnings == []
    disabled, _ = convert_one({"e": {"scalingAdapter": {"enabled": False}}})
    assert "scalingAdapter" not in component(disabled, "e")


def test_pod_spec_metadata_env_probes_mounts() -> None:
    service = {
        "labels": {"l": "svc", "only-svc": "1"},
        "annotations": {"a": "svc"},
        "extraPodMetadata": {"labels": {"l": "pod"}, "annotations": {"b": "pod"}},
        "envs": [{"name": "A", "value": "svc"}, {"name": "B", "value": "svc"}],
        "envFromSecret": "hf-token",
        "livenessProbe": {"httpGet": {"path": "/live", "port": 1}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 1}},
        "volumeMounts": [{"name": "cache", "mountPoint": "/cache", "useAsCompilationCache": True}],
        "extraPodSpec": {
            "nodeSelector": {"gpu": "h100"},
            "containers": [{"name": "side", "image": "s"}],
            "mainContainer": {
                "name": "ignored",
                "image": "i",
                "env": [{"name": "B", "value": "main"}],
                "envFrom": [{"configMapRef": {"name": "cm"}}],
                "readinessProbe": {"tcpSocket": {"port": 2}},
            },
        },
    }
    doc, _ = convert_one({"w": service})
    comp = component(doc, "w")
    template = comp["podTemplate"]
    assert template["metadata"] == {
        "labels": {"l": "pod", "only-svc": "1"},
        "annotations": {"a": "svc", "b": "pod"},
    }
    spec = template["spec"]
    assert spec["nodeSelector"] == {"gpu": "h100"}
    assert [c["name"] for c in spec["containers"]] == ["main", "side"]
    assert "mainContainer" not in spec
    main = main_of(comp)
    assert main["env"] == [{"name": "A", "value": "svc"}, {"name": "B", "value": "main"}]
    assert main["envFrom"] == [
        {"configMapRef": {"name": "cm"}},
        {"secretRef": {"name": "hf-token"}},
    ]
    assert main["livenessProbe"] == {"httpGet": {"path": "/live", "port": 1}}
    assert main["readinessProbe"] == {"tcpSocket": {"port": 2}}
    assert main["volumeMounts"] == [{"name": "cache", "mountPath": "/cache"}]
    assert spec["volumes"] == [{"name": "cache", "persistentVolumeClaim": {"claimName": "cache"}}]
    assert comp["compilationCache"] == {"pvcName": "cache", "mountPath": "/cache"}


def test_graph_level_fields() -> None:
    doc, _ = convert_one(
        {},
        envs=[{"name": "X", "value": "1"}],
        annotations={"a": "1"},
        labels={"l": "1"},
        restart={"id": "r"},
        priorityClassName="high",
        topologyConstraint={"clusterTopologyName": "t"},
        experimental={"kvTransferPolicy": {"domain": "d"}},
        providerOverride={"apiVersion": "a/v1", "value": {}},
    )
    spec = doc["spec"]
    assert spec["env"] == [{"name": "X", "value": "1"}]
    for key in (
        "annotations",
        "labels",
        "restart",
        "priorityClassName",
        "topologyConstraint",
        "experimental",
        "providerOverride",
    ):
        assert key in spec, key
    assert "envs" not in spec


def test_status_is_renamed() -> None:
    doc = alpha({})
    doc["status"] = {
        "services": {"a": {"replicas": 1}},
        "rollingUpdate": {"updatedServices": ["a"]},
    }
    out = convert_documents([doc]).documents[0]
    assert out["status"] == {
        "components": {"a": {"replicas": 1}},
        "rollingUpdate": {"updatedComponents": ["a"]},
    }


def test_alpha_dcd_gets_its_name() -> None:
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-decode"},
        "spec": {
            "backendFramework": "vllm",
            "componentType": "worker",
            "subComponentType": "decode",
            "replicas": 2,
        },
    }
    out = convert_documents([dcd]).documents[0]
    assert out["apiVersion"] == "nvidia.com/v1beta1"
    assert out["spec"] == {
        "name": "g-decode",
        "backendFramework": "vllm",
        "type": "decode",
        "replicas": 2,
    }


def test_example_7_v1beta1_stream_passes_through() -> None:
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}},
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "p"},
            "spec": {"resources": {"requests": {"storage": "1Gi"}}},
        },
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {"components": [{"name": "a"}]},
        },
    ]
    result = convert_documents(json.loads(json.dumps(docs)))
    assert result.documents == docs
    assert result.warnings == []
    assert result.converted == 0


def test_invalid_service_name() -> None:
    with pytest.raises(
        ConversionError, match=r"^DynamoGraphDeployment/ns/g: spec\.services\.bad_name: "
    ):
        convert_documents([alpha({"bad_name": {}})])


# -- CLI ---------------------------------------------------------------------------------------


def run_cli(tmp_path, capsys, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    code = main(["convert", "-f", str(path), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_converts_and_round_trips_yaml(tmp_path, capsys) -> None:
    code, out, err = run_cli(tmp_path, capsys, HOPPER)
    assert code == 0
    assert err == ""
    docs = list(yaml.safe_load_all(out))
    assert [c["name"] for c in docs[0]["spec"]["components"]] == ["Frontend", "decode", "prefill"]


def test_cli_json_output(tmp_path, capsys) -> None:
    code, out, _ = run_cli(tmp_path, capsys, HOPPER, "-o", "json")
    assert code == 0
    assert json.loads(out)["apiVersion"] == "nvidia.com/v1beta1"
    two = HOPPER + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    code, out, _ = run_cli(tmp_path, capsys, two, "-o", "json")
    body = json.loads(out)
    assert body["kind"] == "List"
    assert [d["kind"] for d in body["items"]] == ["DynamoGraphDeployment", "ConfigMap"]


def test_cli_stream_order_is_kept(tmp_path, capsys) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + HOPPER
    code, out, _ = run_cli(tmp_path, capsys, text)
    assert code == 0
    assert [d["kind"] for d in yaml.safe_load_all(out)] == ["ConfigMap", "DynamoGraphDeployment"]


def test_cli_warnings_and_strict(tmp_path, capsys) -> None:
    text = yaml.safe_dump(alpha({"Frontend": with_image({"ingress": {"enabled": True}})}))
    code, out, err = run_cli(tmp_path, capsys, text)
    assert code == 0
    assert err == "warning: spec.services.Frontend.ingress dropped: out of scope\n"
    assert "ingress" not in out
    code, out, err = run_cli(tmp_path, capsys, text, "--strict")
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "warning: spec.services.Frontend.ingress dropped: out of scope"
    assert lines[1].startswith("error: ")
    assert "--strict" in lines[1]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a: [b", "not valid YAML"),
        ("- 1\n", "document 1 is a list"),
        (
            yaml.safe_dump(alpha({"a": {"replicas": "many"}})),
            "DynamoGraphDeployment/ns/g: spec.components[0].replicas: Invalid value: "
            '"string": spec.components[0].replicas in body must be of type integer: "string"',
        ),
        (
            yaml.safe_dump(alpha({"a": {"replicas": 1}})),
            "DynamoGraphDeployment/ns/g: invalid after conversion: spec.components[0].podTemplate: "
            'a container named "main"',
        ),
        (yaml.safe_dump(alpha([1, 2])), "DynamoGraphDeployment/ns/g: spec.services: must be a map"),
    ],
)
def test_cli_bad_input_is_one_line_exit_1(tmp_path, capsys, text: str, needle: str) -> None:
    code, out, err = run_cli(tmp_path, capsys, text)
    assert code == 1
    assert out == ""
    assert err.startswith("error: ")
    assert needle in err
    assert err.count("\n") == 1


def test_cli_missing_file(capsys, tmp_path) -> None:
    assert main(["convert", "-f", str(tmp_path / "none.yaml")]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path / 'none.yaml'}: no such file\n"
