"""``syncagent run --operator-config FILE`` on a real API server: the Deployments and
LeaderWorkerSets the agent applies carry the configuration's standard environment in every
``main`` container, and the fields the agent does not use are named once in its log."""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.support.agent import running_agent
from tests.support.graphs import example_graph
from tests.support.kube import Kube, names
from tests.support.polling import eventually

DEADLINE = 60.0
STANDARD = {
    "NATS_SERVER": "nats://nats.dynamo-system:4222",
    "ETCD_ENDPOINTS": "etcd.dynamo-system:2379",
    "MODEL_EXPRESS_URL": "http://model-express.dynamo-system:8080",
    "PROMETHEUS_ENDPOINT": "http://prometheus.monitoring:9090",
}
CONFIG = {
    "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
    "kind": "OperatorConfiguration",
    "infrastructure": {
        "natsAddress": STANDARD["NATS_SERVER"],
        "etcdAddress": STANDARD["ETCD_ENDPOINTS"],
        "modelExpressURL": STANDARD["MODEL_EXPRESS_URL"],
        "prometheusEndpoint": STANDARD["PROMETHEUS_ENDPOINT"],
    },
    "mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"},
    "rbac": {
        "plannerClusterRoleName": "planner",
        "dgdrProfilingClusterRoleName": "profiling",
        "eppClusterRoleName": "epp",
    },
    "gpu": {"discoveryEnabled": True},
}


def mains(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = obj["spec"]
    templates = (
        [spec["template"]]
        if "template" in spec
        else [
            spec["leaderWorkerTemplate"]["leaderTemplate"],
            spec["leaderWorkerTemplate"]["workerTemplate"],
        ]
    )
    return [c for t in templates for c in t["spec"]["containers"] if c["name"] == "main"]


def standard_env(kube: Kube, namespace: str) -> list[dict[str, str | None]]:
    found = []
    for kind in ("Deployment", "LeaderWorkerSet"):
        for name in names(kube, kind, namespace):
            obj = kube.get(kind, namespace, name)
            assert obj is not None
            for main in mains(obj):
                env = {e["name"]: e.get("value") for e in main.get("env") or []}
                found.append({k: env.get(k) for k in STANDARD})
    return found


def test_the_agent_renders_the_standard_environment_and_names_unused_fields(
    control_plane, kube, namespace, tmp_path
):
    path = tmp_path / "operator-config.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    graph = example_graph(namespace)
    graph["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    kube.create(graph)
    with running_agent(
        control_plane.kubeconfig, "--operator-config", str(path), namespace=namespace
    ) as agent:
        eventually(
            lambda: (
                names(kube, "Deployment", namespace) == {"demo-frontend", "demo-decode"}
                and names(kube, "LeaderWorkerSet", namespace) == {"demo-prefill-0"}
            ),
            deadline=DEADLINE,
            what="the Deployments and the LeaderWorkerSet",
        )
        found = standard_env(kube, namespace)
        assert len(found) == 4  # two Deployments, the LWS's leader and worker
        assert all(f == STANDARD for f in found), found
        unused = [
            json.loads(line)
            for line in agent.logs().splitlines()
            if "operator configuration fields unused" in line
        ]
        assert len(unused) == 1
        assert unused[0]["file"] == str(path)
        assert "gpu.discoveryEnabled" in unused[0]["detail"]
        assert "infrastructure" not in unused[0]["detail"]
