"""The real upstream Dynamo operator (built from the snapshot's ``cmd/main.go``) serving a graph
in the simulated cluster: its DCDs, its Deployments, their pods Ready on the kwok nodes, with no
status written by a test. The ground the takeover scenarios (issue 25) stand on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.e2e.support.observe import DEADLINE, pod_ready, pods
from tests.e2e.support.upstream_crds import crd_folder, upstream_crds_installed
from tests.e2e.support.upstream_operator import ensure_operator, running_operator
from tests.support import figures
from tests.support.graphs import ENABLE_GROVE, component, graph
from tests.support.kube import DCD, DGD, Kube, condition, controller
from tests.support.polling import eventually
from tests.support.upstream_source import BuildReport, missing_source, reference_root

FIGURES = "upstream operator (ms)"


@pytest.fixture(scope="module")
def operator_binary() -> BuildReport:
    problem = missing_source()
    if problem:
        pytest.fail(problem, pytrace=False)
    report = ensure_operator(reference_root() / "source")
    key = "build (cold)" if report.built else "build (cached)"
    figures.count(FIGURES, key, round(report.seconds * 1000))
    return report


@pytest.fixture
def upstream_crds(kube: Kube, operator_binary: BuildReport) -> Iterator[list[str]]:
    with upstream_crds_installed(kube, crd_folder(operator_binary.binary)) as names:
        yield names


def served_grove(kube: Kube) -> list[str]:
    """``kind/version`` of every grove.io resource the cluster serves."""
    group = kube.request("GET", "/apis/grove.io")
    out = []
    for version in group["versions"]:
        found = kube.request("GET", f"/apis/{version['groupVersion']}")
        out += [
            f"{r['kind']}/{version['version']}" for r in found["resources"] if "/" not in r["name"]
        ]
    return sorted(out)


def owned(items: list[dict[str, Any]], owners: list[dict[str, Any]]) -> list[dict[str, Any]]:
    uids = {o["metadata"]["uid"] for o in owners}
    return [i for i in items if controller(i).get("uid") in uids]


def served_pods(kube: Kube, ns: str, name: str) -> dict[str, Any] | None:
    """The graph's DCDs, Deployments and pods once every pod the Deployments want is Ready and
    upstream calls its DCDs Available and the graph Ready."""
    dgd = kube.get(DGD, ns, name)
    dcds = owned(kube.list(DCD, ns), [dgd] if dgd else [])
    deployments = owned(kube.list("Deployment", ns), dcds)
    sets = owned(
        kube.request("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets")["items"], deployments
    )
    ready = [p for p in owned(pods(kube, ns), sets) if pod_ready(p)]
    wanted = sum(d["spec"]["replicas"] for d in deployments)
    if len(dcds) < 2 or len(deployments) < len(dcds) or len(ready) != wanted:
        return None
    # Upstream's own verdict, from what the Deployment controller reported.
    if not all(condition(d, "Available").get("status") == "True" for d in dcds):
        return None
    if condition(dgd, "Ready").get("status") != "True":
        return None
    return {"dcds": dcds, "deployments": deployments, "pods": ready}


def test_upstream_operator_serves_an_aggregated_graph(
    control_plane: SimulatedCluster, kube: Kube, namespace: str, upstream_crds: list[str]
) -> None:
    grove = served_grove(kube)
    # The cluster's Grove CRDs (syncagent.devcluster.versions.GROVE), which the operator's
    # Grove gate detects: it must start its controllers against them.
    assert "PodCliqueSet/v1alpha1" in grove, grove
    print(f"grove.io served: {grove}; upstream CRDs: {upstream_crds}")
    binary = ensure_operator(reference_root() / "source").binary
    cert_dir = control_plane.pki.webhook_dir
    with running_operator(binary, control_plane.kubeconfig, namespace, cert_dir=cert_dir) as op:
        figures.count(FIGURES, "start to ready", round(op.started_seconds * 1000))
        components = [component("Frontend", "frontend"), component("worker", "worker")]
        created = time.monotonic()
        kube.create(graph(namespace, "agg", components, **{ENABLE_GROVE: "false"}))
        served = eventually(
            lambda: served_pods(kube, namespace, "agg"),
            deadline=DEADLINE,
            what="upstream's DCDs, Deployments and Ready pods for graph agg",
        )
        figures.count(FIGURES, "graph to pods ready", round((time.monotonic() - created) * 1000))
        assert op.process.poll() is None, op.log_text()[-3000:]
        log = op.log_text()
    # Its Grove gate followed the grove.io group the cluster serves, and the DGD controller,
    # which watches PodCliqueSets, PodCliques and PodCliqueScalingGroups when it is on, synced
    # those caches against the cluster's Grove CRDs before its workers started.
    assert '"grove": true' in log
    for kind in ("PodCliqueSet", "PodClique", "PodCliqueScalingGroup"):
        assert f"kind source: *v1alpha1.{kind}" in log, kind
    names = sorted(d["metadata"]["name"] for d in served["deployments"])
    print(f"upstream served agg: Deployments {names}, {len(served['pods'])} Ready pods")
    assert len(served["dcds"]) == 2, served["dcds"]
    assert len(served["pods"]) == 2, served["pods"]
    assert names[0] == "agg-frontend", names
    # Upstream names worker DCDs <graph>-<component>-<workerHash> (docs/parity.md D1).
    assert names[1].startswith("agg-worker-"), names
