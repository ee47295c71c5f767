"""The operator configuration in the chart: mounted from the chart's own ConfigMap or from an
existing one (the Dynamo platform chart's), passed as --operator-config; none without values."""

from __future__ import annotations

from typing import Any

from syncagent.api.operatorconfig import load_operator_config
from tests.chart.support.render import container, objects, one, render

CONFIG: dict[str, Any] = {
    "mpi": {"sshSecretName": "mpi-ssh", "sshSecretNamespace": "dynamo-system"},
    "rbac": {
        "plannerClusterRoleName": "planner",
        "dgdrProfilingClusterRoleName": "profiling",
        "eppClusterRoleName": "epp",
    },
    "infrastructure": {"natsAddress": "nats://nats.dynamo:4222"},
    "discovery": {"backend": "etcd"},
}
MOUNT = "/etc/syncagent/operator-config"


def pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return one(docs, "Deployment")["spec"]["template"]["spec"]


def operator_flags(docs: list[dict[str, Any]]) -> list[str]:
    args = container(docs)["args"]
    return [a for a in args if a.startswith(("--operator-config", "--discovery-backend"))]


def test_without_values_no_configuration_is_mounted_and_no_backend_is_forced() -> None:
    docs = render()
    assert operator_flags(docs) == []
    assert objects(docs, "ConfigMap") == []
    assert "operator-config" not in [v["name"] for v in pod(docs)["volumes"]]


def test_the_charts_own_configmap_holds_a_file_the_agent_accepts() -> None:
    docs = render({"operatorConfig": {"config": CONFIG}})
    (cm,) = [
        c for c in objects(docs, "ConfigMap") if c["metadata"]["name"].endswith("operator-config")
    ]
    loaded = load_operator_config(cm["data"]["config.yaml"], source="cm")
    assert loaded.config.infrastructure.nats_address == "nats://nats.dynamo:4222"
    assert loaded.config.discovery.backend == "etcd"
    assert operator_flags(docs) == [f"--operator-config={MOUNT}/config.yaml"]
    volume = next(v for v in pod(docs)["volumes"] if v["name"] == "operator-config")
    assert volume["configMap"]["name"] == cm["metadata"]["name"]
    mount = next(m for m in container(docs)["volumeMounts"] if m["name"] == "operator-config")
    assert (mount["mountPath"], mount["readOnly"]) == (MOUNT, True)
    changed = render(
        {"operatorConfig": {"config": {**CONFIG, "discovery": {"backend": "kubernetes"}}}}
    )
    key = "syncagent.io/operator-config-checksum"
    annotations = one(docs, "Deployment")["spec"]["template"]["metadata"]["annotations"]
    changed_annotations = one(changed, "Deployment")["spec"]["template"]["metadata"]["annotations"]
    assert annotations[key] != changed_annotations[key]


def test_an_existing_configmap_is_mounted_and_the_chart_writes_none() -> None:
    values = {
        "operatorConfig": {
            "existingConfigMap": "dynamo-operator-config",
            "key": "operator.yaml",
            "config": CONFIG,
        },
        "discoveryBackend": "kubernetes",
    }
    docs = render(values)
    assert [c["metadata"]["name"] for c in objects(docs, "ConfigMap")] == []
    assert operator_flags(docs) == [
        "--discovery-backend=kubernetes",
        f"--operator-config={MOUNT}/operator.yaml",
    ]
    volume = next(v for v in pod(docs)["volumes"] if v["name"] == "operator-config")
    assert volume["configMap"] == {
        "name": "dynamo-operator-config",
        "items": [{"key": "operator.yaml", "path": "operator.yaml"}],
    }
