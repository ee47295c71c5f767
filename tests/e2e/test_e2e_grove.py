"""The Grove pathway on the real Grove operator (issue 44 item 1): the agent's PodCliqueSet turned
into PodCliqueScalingGroups, PodCliques and pods on the kwok nodes by Grove's own controllers,
through its defaulting and validating webhooks, with no status written by a test; then a scale
of two components (a clique and a scaling group) reaching pods, and a migration Component ->
Grove -> Component with no serving gap.

The session's cluster runs the operator only with Grove's source tarball
(``$SYNCAGENT_REFERENCE/source``); without it these tests fail (``grove_cluster``)."""

from __future__ import annotations

import time
from typing import Any

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.e2e.support.grove_served import GROVE_ON, PCS, GroveFamily, served, status_writers
from tests.e2e.support.observe import DEADLINE, EndpointRecorder, graph_ready, wait_ready
from tests.support import figures
from tests.support.agent import running_agent
from tests.support.graphs import ENABLE_GROVE, annotate, graph, grove_components
from tests.support.kube import DCD, DGD, ApiFailure, Kube, condition, controller, names
from tests.support.polling import eventually

FIGURES = "grove operator (ms)"
MERGE = "application/merge-patch+json"


def _wait_served(kube: Kube, ns: str, name: str, *, pods: int, what: str) -> GroveFamily:
    found = eventually(lambda: served(kube, ns, name, pods=pods), deadline=DEADLINE, what=what)
    assert found is not None
    return found


def _refused_startup_change(kube: Kube, ns: str, pcs: dict[str, Any]) -> str:
    """The server's answer to a dry-run change of ``cliqueStartupType``, which Grove forbids."""
    current = pcs["spec"]["template"].get("cliqueStartupType")
    other = "CliqueStartupTypeInOrder"
    if current == other:
        other = "CliqueStartupTypeAnyOrder"
    patch = {"spec": {"template": {"cliqueStartupType": other}}}
    path = kube.path(PCS, ns, pcs["metadata"]["name"])
    try:
        kube.request("PATCH", path, patch, content_type=MERGE, dryRun="All")
    except ApiFailure as err:
        return str(err.body)
    raise AssertionError(f"a change of cliqueStartupType from {current} was accepted")


def _scale(components: dict[str, int]) -> Any:
    def change(obj: dict[str, Any]) -> None:
        for c in obj["spec"]["components"]:
            if c["name"] in components:
                c["replicas"] = components[c["name"]]

    return change


def test_a_grove_graph_reaches_ready_on_the_real_grove_operator(
    grove_cluster: SimulatedCluster, kube: Kube, namespace: str
) -> None:
    kube.create(graph(namespace, "gro", grove_components()))
    created = time.monotonic()
    with running_agent(grove_cluster.kubeconfig, *GROVE_ON, namespace=namespace) as agent:
        wait_ready(kube, namespace, "gro", what="the Grove graph Ready from Grove's own status")
        figures.count(FIGURES, "graph to Ready", round((time.monotonic() - created) * 1000))
        # frontend, and the multinode decode as a scaling group of a leader and a worker clique
        found = _wait_served(kube, namespace, "gro", pods=3, what="3 Ready pods of graph gro")
        assert controller(found.pcs)["kind"] == DGD
        assert status_writers(found.pcs) == {"grove-operator"}, found.pcs["metadata"]
        (group,) = found.groups
        assert group["metadata"]["name"] == "gro-0-decode"
        cliques = sorted(c["metadata"]["name"] for c in found.cliques)
        assert cliques == [
            "gro-0-decode-0-decode-ldr",
            "gro-0-decode-0-decode-wkr",
            "gro-0-frontend",
        ]
        # Grove's validating webhook is in the write path of the agent's PodCliqueSet.
        refusal = _refused_startup_change(kube, namespace, found.pcs)
        assert 'admission webhook "pcs.validating.webhooks.grove.io" denied' in refusal, refusal
        # Converged through Grove's webhooks and controllers: a forced reconcile writes nothing.
        writes = agent.scrape().writes()
        before = agent.scrape().sum("syncagent_reconcile_total", controller="dgd")
        kube.edit_graph(
            namespace, "gro", lambda g: g["metadata"].setdefault("annotations", {}).update(t="1")
        )
        eventually(
            lambda: agent.scrape().sum("syncagent_reconcile_total", controller="dgd") > before,
            deadline=DEADLINE,
            what="a reconcile",
        )
        assert agent.scrape().writes() == writes


def test_a_scale_reaches_pods_through_the_real_grove_operator(
    grove_cluster: SimulatedCluster, kube: Kube, namespace: str
) -> None:
    kube.create(graph(namespace, "grs", grove_components()))
    with running_agent(grove_cluster.kubeconfig, *GROVE_ON, namespace=namespace):
        wait_ready(kube, namespace, "grs", what="the Grove graph Ready")
        before = _wait_served(kube, namespace, "grs", pods=3, what="3 Ready pods of graph grs")
        kept = {p["metadata"]["uid"] for p in before.pods}
        started = time.monotonic()
        kube.edit_graph(namespace, "grs", _scale({"frontend": 2, "decode": 2}))
        # 2 frontends, and 2 replicas of the decode scaling group (a leader and a worker each)
        after = _wait_served(kube, namespace, "grs", pods=6, what="6 Ready pods after the scale")
        figures.count(FIGURES, "scale to pods ready", round((time.monotonic() - started) * 1000))
        wait_ready(kube, namespace, "grs", what="the scaled Grove graph Ready")
        assert len(after.pods_of("frontend")) == 2
        assert len(after.pods_of("decode-ldr")) == 2
        assert len(after.pods_of("decode-wkr")) == 2
        (group,) = after.groups
        assert group["spec"]["replicas"] == 2
        # a scale adds pods; it replaces none
        assert kept <= {p["metadata"]["uid"] for p in after.pods}


def test_component_to_grove_and_back_with_no_serving_gap(
    grove_cluster: SimulatedCluster, kube: Kube, namespace: str
) -> None:
    """Each way, the old pathway's workloads stay until the new one's are Ready, and every
    component Service keeps a ready endpoint throughout (the EndpointSlice controller's own)."""
    kube.create(graph(namespace, "grm", grove_components(), **{ENABLE_GROVE: "false"}))
    services = ["grm-frontend", "grm-decode"]
    with running_agent(grove_cluster.kubeconfig, *GROVE_ON, namespace=namespace):
        wait_ready(kube, namespace, "grm", what="the Component graph Ready")
        assert names(kube, DCD, namespace) == {"grm-frontend", "grm-decode"}
        with EndpointRecorder(kube, namespace, services) as recorder:
            kube.edit_graph(namespace, "grm", annotate({ENABLE_GROVE: "true"}))
            eventually(
                lambda: (
                    not names(kube, DCD, namespace)
                    and served(kube, namespace, "grm", pods=3) is not None
                    and graph_ready(kube, namespace, "grm")
                ),
                deadline=DEADLINE,
                what="the cutover to Grove: the PodCliqueSet serving, the DCDs gone",
            )
            kube.edit_graph(namespace, "grm", annotate({ENABLE_GROVE: "false"}))
            eventually(
                lambda: (
                    kube.get(PCS, namespace, "grm") is None
                    and names(kube, DCD, namespace) == {"grm-frontend", "grm-decode"}
                    and graph_ready(kube, namespace, "grm")
                ),
                deadline=DEADLINE,
                what="the way back: the DCDs serving, the PodCliqueSet gone",
            )
        recorder.assert_served_throughout()
        pathway = condition(kube.get(DGD, namespace, "grm"), "WorkloadPathway")
        assert (pathway["status"], pathway["reason"]) == ("True", "Component")
