"""The agent on the Component pathway with a graph carrying the worker hash upstream's operator
recorded on it (docs/parity.md D1): the worker objects keep upstream's suffixed names, a spec
change updates those objects in place, and a removed annotation moves the workers to unsuffixed
objects through the replacement path (the old ones stay until the new ones are ready). No
kubelet here: tests write workload status to simulate readiness."""

from __future__ import annotations

from typing import Any

from tests.support.agent import running_agent
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import example_graph
from tests.support.kube import Kube, condition, names, ready_reason
from tests.support.polling import eventually

DEADLINE = 60.0
DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"
V2 = "nvidia.com/current-worker-hash-v2"
HASH = "1a2b3c4d"


def _hashed_graph(namespace: str) -> dict[str, Any]:
    g = example_graph(namespace)
    g["metadata"]["annotations"] = {V2: HASH}
    return g


def _converged_ready(kube: Kube, ns: str) -> None:
    def ready() -> bool:
        simulate_ready(kube, ns)
        return ready_reason(kube, ns, "demo") == "all_resources_are_ready"

    eventually(ready, deadline=DEADLINE, what="demo to become Ready")


def test_recorded_worker_hash_names_the_workers_and_a_spec_change_updates_them_in_place(
    control_plane, kube, namespace
):
    kube.create(_hashed_graph(namespace))
    decode, prefill = f"demo-decode-{HASH}", f"demo-prefill-{HASH}"
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        _converged_ready(kube, namespace)
        assert names(kube, DCD, namespace) == {"demo-frontend", decode, prefill}
        assert names(kube, "Deployment", namespace) == {"demo-frontend", decode}
        assert names(kube, "LeaderWorkerSet", namespace) == {f"{prefill}-0"}
        assert {"demo-frontend", decode, prefill} <= names(kube, "Service", namespace)
        deployment = kube.get("Deployment", namespace, decode)
        template = deployment["spec"]["template"]
        assert template["metadata"]["labels"]["nvidia.com/dynamo-worker-hash"] == HASH
        env = template["spec"]["containers"][0]["env"]
        assert {"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": HASH} in env
        status = kube.get(DGD, namespace, "demo")["status"]["components"]["decode"]
        assert status["componentNames"] == [decode]
        assert status["runtimeNamespace"] == f"{namespace}-demo-{HASH}"
        uid = deployment["metadata"]["uid"]

        def scale(g: dict[str, Any]) -> None:
            next(c for c in g["spec"]["components"] if c["name"] == "decode")["replicas"] = 3

        kube.edit_graph(namespace, "demo", scale)
        eventually(
            lambda: kube.get("Deployment", namespace, decode)["spec"]["replicas"] == 3,
            deadline=DEADLINE,
            what="the decode Deployment scaled in place",
        )
        _converged_ready(kube, namespace)
        # the same objects: the recorded generation names them until the annotation changes
        assert kube.get("Deployment", namespace, decode)["metadata"]["uid"] == uid
        assert names(kube, DCD, namespace) == {"demo-frontend", decode, prefill}


def test_a_removed_worker_hash_replaces_the_workers_only_once_the_new_ones_are_ready(
    control_plane, kube, namespace
):
    kube.create(_hashed_graph(namespace))
    decode = f"demo-decode-{HASH}"
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        _converged_ready(kube, namespace)

        def forget(g: dict[str, Any]) -> None:
            g["metadata"]["annotations"].pop(V2)

        kube.edit_graph(namespace, "demo", forget)

        def waiting() -> bool:
            pathway = condition(kube.get(DGD, namespace, "demo"), "WorkloadPathway")
            return f"{DCD} {decode}" in pathway.get("message", "")

        # Nothing reports the new Deployments ready yet, so the agent must keep the old ones.
        eventually(waiting, deadline=DEADLINE, what="the graph to wait for the replacement")
        assert {"demo-decode", decode} <= names(kube, DCD, namespace)
        assert {"demo-decode", decode} <= names(kube, "Deployment", namespace)
        assert (
            kube.get("Deployment", namespace, decode)["metadata"].get("deletionTimestamp") is None
        )

        _converged_ready(kube, namespace)
        eventually(
            lambda: names(kube, DCD, namespace) == {"demo-frontend", "demo-decode", "demo-prefill"},
            deadline=DEADLINE,
            what="the suffixed DCDs to go once their replacements are ready",
        )
        eventually(
            lambda: decode not in names(kube, "Deployment", namespace),
            deadline=DEADLINE,
            what="the suffixed Deployment to go",
        )
