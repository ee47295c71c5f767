"""Deployment and LeaderWorkerSet shapes: rendering.md §3 acceptance examples."""

from __future__ import annotations

import pytest

from syncagent.render import (
    Environment,
    RenderError,
    deployment,
    leader_worker_set,
    leader_worker_templates,
    render_component,
    source_of_object,
)
from tests.support.graphs import typed


def dcd(name="lws-manifest", *, annotations=None, graph=None, **spec):
    meta = {"name": name, "namespace": "ns", "annotations": annotations or {}}
    if graph:
        meta["ownerReferences"] = [
            {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeployment",
                "name": graph,
                "uid": "g",
            }
        ]
    base = {
        "backendFramework": "vllm",
        "name": "decode",
        "type": "decode",
        "podTemplate": {
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.example/dynamo-worker:test",
                        "args": ["--model", "test/model"],
                    }
                ]
            }
        },
    }
    return source_of_object({"metadata": meta, "spec": base | spec})


def test_example_1_lws_spec_exactly():
    source = dcd(replicas=2, multinode={"nodeCount": 2})
    lws = leader_worker_set(source, env=Environment())
    assert lws.manager == "syncagent/workloads"
    assert (lws.api_version, lws.kind, lws.name) == (
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
        "lws-manifest-0",
    )
    leader, worker = leader_worker_templates(source, env=Environment())
    assert lws.body["spec"] == {
        "replicas": 2,
        "startupPolicy": "LeaderCreated",
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1, "partition": 0},
        },
        "networkConfig": {"subdomainPolicy": "Shared"},
        "leaderWorkerTemplate": {
            "size": 2,
            "restartPolicy": "RecreateGroupOnPodRestart",
            "leaderTemplate": leader,
            "workerTemplate": worker,
        },
    }
    assert leader["metadata"]["labels"]["role"] == "leader"
    assert worker["metadata"]["labels"]["role"] == "worker"
    assert lws.owner.kind == "DynamoComponentDeployment"
    assert lws.owner.name == "lws-manifest"
    assert "status" not in lws.body


def test_lws_node_count_defaults_to_two():
    lws = leader_worker_set(dcd(multinode={}), env=Environment())
    assert lws.body["spec"]["leaderWorkerTemplate"]["size"] == 2


def test_deployment_shape():
    source = dcd("deployment-manifest", replicas=2)
    dep = deployment(source, env=Environment())
    assert (dep.api_version, dep.kind, dep.name, dep.namespace) == (
        "apps/v1",
        "Deployment",
        "deployment-manifest",
        "ns",
    )
    spec = dep.body["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"] == {"matchLabels": {"nvidia.com/selector": "deployment-manifest"}}
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
    }
    assert spec["template"]["metadata"]["labels"]["nvidia.com/selector"] == "deployment-manifest"
    labels = dep.body["metadata"]["labels"]
    assert labels["nvidia.com/dynamo-component"] == "decode"
    assert labels["nvidia.com/dynamo-namespace"] == "ns-deployment-manifest"


def _annotated(annotations: dict) -> object:
    """A DCD whose pod template carries ``annotations``: the workload annotations, which the
    strategy reads, are the template's (rendering.md §3; upstream ``GetDCDKubeAnnotations``)."""
    source = dcd()
    source.spec["podTemplate"]["metadata"] = {"annotations": annotations}
    return source


def test_example_2_recreate_strategy():
    dep = deployment(_annotated({"nvidia.com/deployment-strategy": "Recreate"}), env=Environment())
    assert dep.body["spec"]["strategy"] == {"type": "Recreate"}


def test_example_3_digit_surge_values_become_integers():
    annotations = {
        "nvidia.com/deployment-rolling-update-max-surge": "1",
        "nvidia.com/deployment-rolling-update-max-unavailable": "0",
    }
    dep = deployment(_annotated(annotations), env=Environment())
    assert dep.body["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    annotations["nvidia.com/deployment-rolling-update-max-surge"] = "50%"
    dep = deployment(_annotated(annotations), env=Environment())
    assert dep.body["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "50%"


def test_strategy_ignores_the_dcd_metadata_annotations():
    """Upstream reads the strategy from ``GetDCDKubeAnnotations`` / ``getResourceAnnotations``
    (``dynamocomponentdeployment_controller.go`` ``generateDeployment``): the pod template's
    annotations, never the DCD object's metadata."""
    dep = deployment(
        dcd(annotations={"nvidia.com/deployment-strategy": "Recreate"}), env=Environment()
    )
    assert dep.body["spec"]["strategy"]["type"] == "RollingUpdate"


def test_example_4_replicas_unset():
    dep = deployment(dcd(), env=Environment())
    assert "replicas" not in dep.body["spec"]
    lws = leader_worker_set(dcd(multinode={"nodeCount": 3}), env=Environment())
    assert lws.body["spec"]["replicas"] == 1
    assert lws.body["spec"]["leaderWorkerTemplate"]["size"] == 3


def test_example_7_multinode_switch_renders_lws_and_leader_selector():
    single = render_component(dcd(), env=Environment(), lws=True)
    multi = render_component(dcd(multinode={"nodeCount": 2}), env=Environment(), lws=True)
    assert single.workload.kind == "Deployment"
    assert single.workload.name == "lws-manifest"
    assert multi.workload.kind == "LeaderWorkerSet"
    assert multi.workload.name == "lws-manifest-0"
    # the Service keeps its name; the target selector adds role: leader
    assert single.service.name == multi.service.name == "lws-manifest"
    assert multi.service.body["spec"]["selector"] == single.service.body["spec"]["selector"] | {
        "role": "leader"
    }


def test_multinode_without_lws_capability():
    with pytest.raises(RenderError) as err:
        render_component(dcd(multinode={"nodeCount": 2}), env=Environment(), lws=False)
    assert err.value.message == "no multinode orchestrator available"
    assert err.value.reason == "no_multinode_orchestrator_available"
    # single-node components do not need LWS
    assert render_component(dcd(), env=Environment(), lws=False).workload.kind == "Deployment"


def test_workload_metadata():
    source = dcd(
        graph="x",
        modelRef={"name": "test/model"},
        podTemplate={
            "metadata": {
                "labels": {"team": "a"},
                "annotations": {"note": "n", "nvidia.com/dynamo-operator-origin-version": "1"},
            },
            "spec": {"containers": [{"name": "main", "image": "i", "args": ["a"]}]},
        },
    )
    deployed = deployment(source, env=Environment())
    lws = leader_worker_set(source, env=Environment())
    for workload in (deployed, lws):
        meta = workload.body["metadata"]
        # upstream GetDCDKubeLabels: DCD labels, template labels, the sub-type of a decode
        # worker (from its v1alpha1 form), identity; no pod-only label
        assert meta["labels"] == {
            "team": "a",
            "nvidia.com/dynamo-sub-component-type": "decode",
            "nvidia.com/dynamo-graph-deployment-name": "x",
            "nvidia.com/dynamo-base-model-hash": "bbae3530",
            "nvidia.com/dynamo-component": "decode",
            "nvidia.com/dynamo-namespace": "ns-x",
        }
        assert "ownerReferences" not in meta
    # upstream GetDCDKubeAnnotations on the Deployment; generateLeaderWorkerSet writes none
    assert deployed.body["metadata"]["annotations"] == {
        "note": "n",
        "nvidia.com/dynamo-base-model": "test/model",
    }
    assert "annotations" not in lws.body["metadata"]


def test_checkpoint_wait_zeroes_standalone_workload():
    checkpoint = {"enabled": True, "checkpointRef": "ck", "startupPolicy": "WaitForCheckpoint"}
    source = dcd(replicas=3, experimental={"checkpoint": checkpoint})
    assert deployment(source, env=Environment()).body["spec"]["replicas"] == 0
    ready = Environment(checkpoint_ready={"ck": True})
    assert deployment(source, env=ready).body["spec"]["replicas"] == 3


def test_renderer_parity_lws_uses_leader_worker_templates():
    """The DS pathway renders roles with leader_worker_templates: same pods as the LWS."""
    source = dcd(replicas=2, multinode={"nodeCount": 2}, graph="x")
    lws = leader_worker_set(source, env=Environment())
    leader, worker = leader_worker_templates(source, env=Environment())
    assert lws.body["spec"]["leaderWorkerTemplate"]["leaderTemplate"] == leader
    assert lws.body["spec"]["leaderWorkerTemplate"]["workerTemplate"] == worker


def test_renderer_parity_graph_component_path_and_direct_path():
    """DCD pathway (graph -> DCD -> LWS) and the direct per-component path give equal pods."""
    from syncagent.render import render_graph, source_for_component

    container = {
        "name": "main",
        "image": "i:1",
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "m"],
    }
    g = {
        "metadata": {"name": "x", "namespace": "ns", "annotations": {"a": "b"}},
        "spec": {
            "labels": {"team": "t"},
            "env": [{"name": "E", "value": "1"}],
            "components": [
                {
                    "name": "decode",
                    "type": "decode",
                    "multinode": {"nodeCount": 2},
                    "modelRef": {"name": "m"},
                    "podTemplate": {"spec": {"containers": [container]}},
                },
            ],
        },
    }
    (lws,) = [
        o
        for o in render_graph(typed(g), env=Environment(), lws=True)
        if o.kind == "LeaderWorkerSet"
    ]
    leader, worker = leader_worker_templates(
        source_for_component(typed(g), "decode"), env=Environment()
    )
    assert lws.body["spec"]["leaderWorkerTemplate"]["leaderTemplate"] == leader
    assert lws.body["spec"]["leaderWorkerTemplate"]["workerTemplate"] == worker
    assert leader["metadata"]["labels"]["team"] == "t"
    with pytest.raises(KeyError):
        source_for_component(typed(g), "nope")
