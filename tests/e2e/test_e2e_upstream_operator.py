"""The real upstream Dynamo operator (built from the snapshot's ``cmd/main.go``) serving a graph
in the simulated cluster: its DCDs, its Deployments, their pods Ready on the kwok nodes, with no
status written by a test. The ground the takeover scenarios (issue 25) stand on."""

from __future__ import annotations

import time

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.e2e.support.observe import DEADLINE
from tests.e2e.support.upstream_operator import FIGURES, running_operator
from tests.e2e.support.upstream_served import served, served_grove
from tests.support import figures
from tests.support.graphs import ENABLE_GROVE, component, graph
from tests.support.kube import Kube
from tests.support.polling import eventually
from tests.support.upstream_source import BuildReport


def test_upstream_operator_serves_an_aggregated_graph(
    control_plane: SimulatedCluster,
    kube: Kube,
    namespace: str,
    operator_binary: BuildReport,
    upstream_crds: list[str],
) -> None:
    grove = served_grove(kube)
    # The cluster's Grove CRDs (syncagent.devcluster.versions.GROVE), which the operator's
    # Grove gate detects: it must start its controllers against them.
    assert "PodCliqueSet/v1alpha1" in grove, grove
    print(f"grove.io served: {grove}; upstream CRDs: {upstream_crds}")
    binary = operator_binary.binary
    cert_dir = control_plane.pki.webhook_dir
    with running_operator(binary, control_plane.kubeconfig, namespace, cert_dir=cert_dir) as op:
        figures.count(FIGURES, "start to ready", round(op.started_seconds * 1000))
        components = [component("Frontend", "frontend"), component("worker", "worker")]
        created = time.monotonic()
        kube.create(graph(namespace, "agg", components, **{ENABLE_GROVE: "false"}))
        found = eventually(
            lambda: served(kube, namespace, "agg"),
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
    names = sorted(d["metadata"]["name"] for d in found["deployments"])
    print(f"upstream served agg: Deployments {names}, {len(found['pods'])} Ready pods")
    assert len(found["dcds"]) == 2, found["dcds"]
    assert len(found["pods"]) == 2, found["pods"]
    assert names[0] == "agg-frontend", names
    # Upstream names worker DCDs <graph>-<component>-<workerHash> (docs/parity.md D1).
    assert names[1].startswith("agg-worker-"), names
