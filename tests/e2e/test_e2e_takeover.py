"""Taking over a graph the real upstream Dynamo operator served (issue 25): the operator serves
it in the simulated cluster, stops, and the agent takes it over. Its worker DCDs carry the
worker hash the operator recorded on the graph (docs/parity.md D1), so the agent applies to the
same objects: no DCD, Deployment, ReplicaSet or pod is replaced."""

from __future__ import annotations

from typing import Any

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.e2e.support.observe import DEADLINE
from tests.e2e.support.upstream_crds import crd_folder, upstream_crds_installed
from tests.e2e.support.upstream_operator import running_operator
from tests.e2e.support.upstream_served import changes, describe, identities, served
from tests.support.agent import running_agent
from tests.support.graphs import ENABLE_GROVE, component, graph
from tests.support.kube import Kube
from tests.support.polling import eventually
from tests.support.upstream_source import BuildReport

V2 = "nvidia.com/current-worker-hash-v2"
WORKLOADS_MANAGER = "syncagent/workloads"
COMPONENTS_MANAGER = "syncagent/components"


def _applied_by(obj: dict[str, Any], manager: str) -> bool:
    return any(e.get("manager") == manager for e in obj["metadata"].get("managedFields") or [])


def _taken_over(kube: Kube, ns: str, name: str) -> dict[str, list[dict[str, Any]]] | None:
    """The graph served, once the agent has routed it, applied every DCD and Deployment, and the
    Deployment controller has seen the agent's last write (a changed pod template would show
    as a new ReplicaSet by then)."""
    found = served(kube, ns, name)
    if found is None:
        return None
    routing = (found["graph"][0].get("status") or {}).get("routing") or {}
    if routing.get("pathway") != "Component":
        return None
    if not all(_applied_by(d, COMPONENTS_MANAGER) for d in found["dcds"]):
        return None
    for deployment in found["deployments"]:
        status = deployment.get("status") or {}
        if not _applied_by(deployment, WORKLOADS_MANAGER):
            return None
        if status.get("observedGeneration") != deployment["metadata"]["generation"]:
            return None
    return found


def test_agent_takes_over_an_upstream_served_graph_without_replacing_a_pod(
    control_plane: SimulatedCluster,
    kube: Kube,
    namespace: str,
    operator_binary: BuildReport,
) -> None:
    components = [
        component("Frontend", "frontend"),
        component("prefill", "prefill"),
        component("decode", "decode", replicas=2),
    ]
    binary, cert_dir = operator_binary.binary, control_plane.pki.webhook_dir
    crds = upstream_crds_installed(kube, crd_folder(binary))
    operator = running_operator(binary, control_plane.kubeconfig, namespace, cert_dir=cert_dir)
    # Upstream's CRDs only while its operator runs: the agent then runs on ours, as installed.
    with crds, operator as op:
        kube.create(graph(namespace, "dis", components, **{ENABLE_GROVE: "false"}))
        before = eventually(
            lambda: served(kube, namespace, "dis"),
            deadline=DEADLINE,
            what="upstream's DCDs, Deployments and Ready pods for graph dis",
        )
        assert op.process.poll() is None, op.log_text()[-3000:]
    recorded = before["graph"][0]["metadata"]["annotations"][V2]
    names = sorted(d["metadata"]["name"] for d in before["deployments"])
    assert names == ["dis-decode-" + recorded, "dis-frontend", "dis-prefill-" + recorded], names

    with running_agent(control_plane.kubeconfig, namespace=namespace):
        after = eventually(
            lambda: _taken_over(kube, namespace, "dis"),
            deadline=DEADLINE,
            what="the agent to take graph dis over",
        )
    lost = changes(identities(before), identities(after))
    assert not lost, "\n".join([*lost, "after:", describe(after)])
