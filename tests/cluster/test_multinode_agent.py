"""The agent renders the multinode launch against a real API server (docs/multinode.md).

- On the Component pathway the DCD reconciler reads the graph's operator origin version from
  its cache (the DCD never carries it): a pre-1.0 graph keeps the Ray launch, as upstream.
- Each multinode graph gets its wait-for-leader ConfigMap under ``syncagent/wait-leader``,
  controlled by the graph, removed once no component is multinode.
- A standalone DCD whose mp workers mount the script gets its own ConfigMap.
"""

from __future__ import annotations

from typing import Any

from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.kube import main_of
from tests.support.polling import eventually

DEADLINE = 60.0
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
DCD = "DynamoComponentDeployment"


def _engine(name: str, ctype: str) -> dict[str, Any]:
    """vLLM with tensor parallel 16 on 8 GPUs per node: one engine over two nodes."""
    c = component(name, ctype, nodes=2)
    main = c["podTemplate"]["spec"]["containers"][0]
    main["args"] = ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "16"]
    main["resources"] = {"limits": {"nvidia.com/gpu": "8"}}
    return c


def _managers(obj: dict[str, Any]) -> set[str]:
    return {e["manager"] for e in obj["metadata"].get("managedFields") or ()}


def _controller_uid(obj: dict[str, Any]) -> str:
    (ref,) = [r for r in obj["metadata"]["ownerReferences"] if r.get("controller")]
    return str(ref["uid"])


def test_component_pathway_launch_and_wait_leader_config_map(control_plane, kube, namespace):
    g = graph(namespace, "mn", [component("Frontend", "frontend"), _engine("prefill", "prefill")])
    g["metadata"]["annotations"] = {ORIGIN: "0.9.0"}
    created = kube.create(g)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        lws = eventually(
            lambda: kube.get("LeaderWorkerSet", namespace, "mn-prefill-0"),
            deadline=DEADLINE,
            what="the LeaderWorkerSet of the multinode component",
        )
        templates = lws["spec"]["leaderWorkerTemplate"]
        leader, worker = main_of(templates["leaderTemplate"]), main_of(templates["workerTemplate"])
        assert leader["command"] == worker["command"] == ["/bin/sh", "-c"]
        assert leader["args"][0].startswith(
            "ray start --head --port=6379 && python3 -m dynamo.vllm"
        )
        assert worker["args"] == ["ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]
        assert "livenessProbe" in leader
        assert "livenessProbe" not in worker
        dcd = kube.get(DCD, namespace, "mn-prefill")
        assert ORIGIN not in repr(dcd["metadata"]) + repr(dcd["spec"])

        config_map = eventually(
            lambda: kube.get("ConfigMap", namespace, "mn-wait-leader-script"),
            deadline=DEADLINE,
            what="the wait-for-leader ConfigMap",
        )
        assert _controller_uid(config_map) == created["metadata"]["uid"]
        assert "syncagent/wait-leader" in _managers(config_map)
        assert "wait-for-leader.py" in config_map["data"]

        def single_node(obj: dict[str, Any]) -> None:
            obj["spec"]["components"][1].pop("multinode")

        kube.edit_graph(namespace, "mn", single_node)
        eventually(
            lambda: kube.get("ConfigMap", namespace, "mn-wait-leader-script") is None,
            deadline=DEADLINE,
            what="the ConfigMap to go once no component is multinode",
        )


def test_standalone_mp_dcd_gets_its_own_wait_leader_config_map(control_plane, kube, namespace):
    spec = _engine("decode", "decode")
    spec.pop("name")
    spec["backendFramework"] = "vllm"
    spec["podTemplate"]["metadata"] = {
        "annotations": {"nvidia.com/vllm-distributed-executor-backend": "mp"}
    }
    dcd = kube.create(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": DCD,
            "metadata": {"name": "solo", "namespace": namespace},
            "spec": spec,
        }
    )
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        lws = eventually(
            lambda: kube.get("LeaderWorkerSet", namespace, "solo-0"),
            deadline=DEADLINE,
            what="the LeaderWorkerSet of the standalone DCD",
        )
        worker = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]
        assert [c["name"] for c in worker["spec"]["initContainers"]] == ["wait-for-leader-mp"]
        assert "--headless" in main_of(worker)["args"]
        config_map = eventually(
            lambda: kube.get("ConfigMap", namespace, "solo-wait-leader-script"),
            deadline=DEADLINE,
            what="the standalone DCD's wait-for-leader ConfigMap",
        )
        assert _controller_uid(config_map) == dcd["metadata"]["uid"]
        assert "syncagent/wait-leader" in _managers(config_map)
