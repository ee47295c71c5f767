"""The Component pathway on the real controllers: DCD readiness from Deployments and
LeaderWorkerSets the Deployment, ReplicaSet, StatefulSet and LWS controllers run, and the
README's example graph (examples/agg.yaml) reaching Ready with no status written by hand."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.e2e.support.observe import (
    DEADLINE,
    pod_ready,
    pods,
    wait_ready,
    wait_ready_endpoints,
)
from tests.support.agent import running_agent
from tests.support.graphs import annotate, example_graph
from tests.support.kube import DCD, DGD, LWS, condition, names
from tests.support.polling import eventually

REPO = Path(__file__).resolve().parent.parent.parent
COMPONENT_LABEL = "nvidia.com/dynamo-component"


def test_dcds_become_ready_from_deployments_and_lws_the_controllers_run(
    control_plane, kube, namespace
):
    """Frontend and a 2-replica decode as Deployments, a multinode prefill as an LWS."""
    kube.create(example_graph(namespace))
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        wait_ready(kube, namespace, "demo", what="the Component graph Ready")
        # What the controllers wrote meanwhile (status, the Deployment controller's revision
        # annotation, which bumps the generation) is nothing the agent's apply would undo: its
        # first convergence needed no dry run of an object. (A status apply keeps the
        # resourceVersion rule: a reconcile whose view lags behind its own last status write
        # asks once, as timing has it.) The one dry run there is is the agent's start-up check
        # of the create-only write on a ConfigMap of its own (docs/write-protocol.md §4); a dry
        # run of the graph's own ConfigMap would make it two.
        dry_runs = {
            dict(labels)["resource"]: value
            for (name, labels), value in agent.scrape().samples.items()
            if name == "syncagent_api_requests_total"
            and dict(labels)["dry_run"] == "true"
            and not dict(labels)["resource"].endswith("/status")
        }
        assert dry_runs == {"configmaps": 1.0}, dry_runs
        dcds = {d["metadata"]["name"]: d for d in kube.list(DCD, namespace)}
        assert set(dcds) == {"demo-frontend", "demo-decode", "demo-prefill"}
        for dcd in dcds.values():
            assert condition(dcd, "Available")["status"] == "True", dcd["metadata"]["name"]
        decode = kube.get("Deployment", namespace, "demo-decode")
        # the Deployment controller's own status, not one a test wrote
        assert decode["status"]["availableReplicas"] == 2
        status_writers = {
            m["manager"]
            for m in decode["metadata"]["managedFields"]
            if m.get("subresource") == "status"
        }
        assert status_writers == {"kube-controller-manager"}
        prefill = kube.get(LWS, namespace, "demo-prefill-0")
        assert prefill["status"]["readyReplicas"] == 1
        group = {p["metadata"]["name"]: p for p in pods(kube, namespace)}
        assert pod_ready(group["demo-prefill-0-0"])  # leader
        assert pod_ready(group["demo-prefill-0-0-1"])  # worker
        wait_ready_endpoints(kube, namespace, "demo-frontend", 1)
        wait_ready_endpoints(kube, namespace, "demo-decode", 2)
        # the prefill Service selects the leader only
        wait_ready_endpoints(kube, namespace, "demo-prefill", 1)
        # converged through the LWS webhooks and the controllers' own writes: a forced
        # reconcile of the graph and its DCDs writes nothing
        writes = agent.scrape().writes()
        before = agent.scrape().sum("syncagent_reconcile_total", controller="dgd")
        kube.edit_graph(namespace, "demo", annotate({"t": "1"}))
        eventually(
            lambda: agent.scrape().sum("syncagent_reconcile_total", controller="dgd") > before,
            deadline=DEADLINE,
            what="a reconcile",
        )
        assert agent.scrape().writes() == writes


def test_readme_example_reaches_ready(control_plane, kube, namespace):
    example = yaml.safe_load((REPO / "examples" / "agg.yaml").read_text())
    example["metadata"]["namespace"] = namespace
    kube.create(example)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        wait_ready(kube, namespace, "qwen-agg", what="examples/agg.yaml Ready")
        graph = kube.get(DGD, namespace, "qwen-agg")
        assert graph["status"]["routing"]["pathway"] == "Component"
        assert names(kube, "Deployment", namespace) == {"qwen-agg-frontend", "qwen-agg-worker"}
        workers = [p for p in pods(kube, namespace) if pod_ready(p)]
        gpu_pods = [
            p
            for p in workers
            if p["spec"]["containers"][0]["resources"].get("limits", {}).get("nvidia.com/gpu")
        ]
        # two single-GPU workers, scheduled on the simulated GPU nodes
        assert len(gpu_pods) == 2
        wait_ready_endpoints(kube, namespace, "qwen-agg-worker", 2)
