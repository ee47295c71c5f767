"""DGD -> DCD generation: rendering.md §1 acceptance examples, api.md §1.4 ex. 4 and 11."""

from __future__ import annotations

import pytest

from syncagent.render import (
    Environment,
    GraphLive,
    RenderError,
    generate_dcds,
    pod_template,
    source_of,
    source_of_object,
)
from tests.support.graphs import main_container, typed


def component(name, ctype=None, *, replicas=None, containers=None, **extra):
    out = {"name": name, "podTemplate": {"spec": {"containers": containers or [main_container()]}}}
    if ctype:
        out["type"] = ctype
    if replicas is not None:
        out["replicas"] = replicas
    return out | extra


def graph(name="x", components=(), *, annotations=None, namespace="ns", uid="u-1", **spec):
    meta = {"name": name, "namespace": namespace, "uid": uid}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"components": list(components), **spec},
    }


def by_name(dcds):
    return {d.name: d for d in dcds}


def main_env(dcd):
    containers = dcd.body["spec"]["podTemplate"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "main").get("env")


def test_example_1_component_manifests():
    g = graph(
        "component-manifests",
        [
            component(
                "frontend", "frontend", replicas=1, containers=[main_container("reg/fe:1.4")]
            ),
            component(
                "decode", "decode", replicas=2, containers=[main_container("reg/worker:1.4")]
            ),
        ],
        annotations={"nvidia.com/enable-grove": "false"},
        backendFramework="vllm",
    )
    dcds = by_name(generate_dcds(typed(g)))
    assert set(dcds) == {"component-manifests-frontend", "component-manifests-decode"}
    for cname, ctype, replicas, image in (
        ("frontend", "frontend", 1, "reg/fe:1.4"),
        ("decode", "decode", 2, "reg/worker:1.4"),
    ):
        dcd = dcds[f"component-manifests-{cname}"]
        assert dcd.manager == "syncagent/components"
        assert dcd.kind == "DynamoComponentDeployment"
        assert dcd.api_version == "nvidia.com/v1beta1"
        spec = dcd.body["spec"]
        assert (spec["name"], spec["type"], spec["replicas"]) == (cname, ctype, replicas)
        assert spec["backendFramework"] == "vllm"
        assert spec["podTemplate"]["spec"]["containers"][0]["image"] == image
        labels = dcd.body["metadata"]["labels"]
        assert labels["nvidia.com/dynamo-graph-deployment-name"] == "component-manifests"
        assert labels["nvidia.com/dynamo-component"] == cname
        assert labels["nvidia.com/dynamo-namespace"] == "ns-component-manifests"
        text = repr(dcd.body)
        assert "nvidia.com/dynamo-worker-hash" not in text
        assert "nvidia.com/dynamo-operator-origin-version" not in text
        assert dcd.owner.kind == "DynamoGraphDeployment"
        assert dcd.owner.name == "component-manifests"
        assert dcd.owner.uid == "u-1"
        assert "ownerReferences" not in dcd.body["metadata"]
        assert dcd.create_manifest()["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeployment",
                "name": "component-manifests",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]


def test_example_2_graph_env_first_component_wins():
    g = graph(
        components=[
            component(
                "decode",
                "decode",
                containers=[
                    main_container(
                        env=[{"name": "B", "value": "3"}, {"name": "C", "value": "$(A)"}]
                    )
                ],
            )
        ],
        env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    )
    (dcd,) = generate_dcds(typed(g))
    assert main_env(dcd)[:3] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "3"},
        {"name": "C", "value": "$(A)"},
    ]
    # the pod merges the defaults in, one list sorted by name (upstream MergeEnvs)
    tpl = pod_template(source_of(dcd, graph="x"), role="main", env=Environment())
    names = [e["name"] for e in tpl["spec"]["containers"][0]["env"]]
    assert names == sorted(names)
    assert {"A", "B", "C"} <= set(names)


def test_graph_env_merges_sorted_by_name_as_upstream_does():
    # upstream applyDGDTemplateDefaults: MergeEnvs(graph env, component env), sorted by name;
    # spec/rendering.md §2 step 2 put the graph's first, which would reorder every such pod
    g = graph(
        components=[
            component("decode", "decode", containers=[main_container(env=[{"name": "A"}])])
        ],
        env=[{"name": "Z", "value": "1"}],
    )
    (dcd,) = generate_dcds(typed(g))
    assert [e["name"] for e in main_env(dcd)] == ["A", "Z"]


def worker(name, module, ctype="worker"):
    return component(
        name, ctype, containers=[main_container(command=["python3", "-m", module], args=["--x"])]
    )


def test_example_3_two_backends_detected():
    g = graph(
        components=[
            worker("decode", "dynamo.vllm", "decode"),
            worker("prefill", "dynamo.sglang", "prefill"),
        ]
    )
    with pytest.raises(RenderError) as err:
        generate_dcds(typed(g))
    assert err.value.message == (
        "multiple backend frameworks detected for generated DynamoComponentDeployments: "
        "vllm and sglang"
    )
    assert err.value.reason == "failed_to_reconcile_the_resources"


def test_backend_detection_single_value_and_none():
    g = graph(components=[component("frontend", "frontend"), worker("w", "dynamo.trtllm")])
    assert {d.body["spec"]["backendFramework"] for d in generate_dcds(typed(g))} == {"trtllm"}
    plain = graph(components=[component("w", "worker")])
    (dcd,) = generate_dcds(typed(plain))
    assert "backendFramework" not in dcd.body["spec"]


def test_backend_from_graph_then_live_dcd():
    g = graph(
        components=[worker("decode", "dynamo.vllm", "decode"), worker("p", "dynamo.sglang")],
        backendFramework="trtllm",
    )
    assert {d.body["spec"]["backendFramework"] for d in generate_dcds(typed(g))} == {"trtllm"}
    g["spec"].pop("backendFramework")
    live = GraphLive(backend={"decode": "vllm", "p": "vllm"})
    # the live values win over detection, so the conflict is never evaluated
    assert {d.body["spec"]["backendFramework"] for d in generate_dcds(typed(g), live=live)} == {
        "vllm"
    }


def test_example_4_component_labels_win_over_graph_labels():
    c = component("decode", "decode")
    c["podTemplate"]["metadata"] = {"labels": {"team": "b"}}
    g = graph(components=[c], labels={"team": "a", "tier": "gold"})
    (dcd,) = generate_dcds(typed(g))
    assert dcd.body["metadata"]["labels"]["team"] == "b"
    # the graph's spec.labels reach the pods through the template, not the DCD's own labels
    # (upstream generateSingleDCD labels a DCD with the component's template labels only)
    assert "tier" not in dcd.body["metadata"]["labels"]
    tpl = pod_template(source_of(dcd, graph="x"), role="main", env=Environment())
    assert tpl["metadata"]["labels"]["team"] == "b"
    assert tpl["metadata"]["labels"]["tier"] == "gold"


def restart_at(dcd):
    return (
        dcd.body["spec"]["podTemplate"]
        .get("metadata", {})
        .get("annotations", {})
        .get("nvidia.com/restartAt")
    )


def test_example_5_restart_annotates_only_restarting_components():
    g = graph(
        components=[component("frontend", "frontend"), component("decode", "decode")],
        restart={"id": "r2"},
    )
    live = GraphLive(restart_at={"frontend": "r1"}, restarting=frozenset({"decode"}))
    dcds = by_name(generate_dcds(typed(g), live=live))
    assert restart_at(dcds["x-decode"]) == "r2"
    assert restart_at(dcds["x-frontend"]) == "r1"
    # without a live value nothing is written
    dcds = by_name(generate_dcds(typed(g), live=GraphLive(restarting=frozenset({"decode"}))))
    assert restart_at(dcds["x-frontend"]) is None


def test_example_6_rendered_name_has_no_hash_suffix():
    (dcd,) = generate_dcds(typed(graph(components=[component("decode", "decode")])))
    assert dcd.name == "x-decode"
    # a live worker-hash DCD of the same component maps to the same rendered name
    live = {
        "metadata": {
            "name": "x-decode-1a2b3c4d",
            "namespace": "ns",
            "ownerReferences": [{"kind": "DynamoGraphDeployment", "name": "x", "uid": "u"}],
        },
        "spec": {"name": "decode", "type": "decode"},
    }
    assert source_of_object(live).component_name == "decode"


def test_graph_metadata_annotations_copied_into_template_when_absent():
    c = component("decode", "decode")
    c["podTemplate"]["metadata"] = {"annotations": {"nvidia.com/enable-metrics": "true"}}
    g = graph(
        components=[c],
        annotations={
            "nvidia.com/enable-metrics": "false",
            "nvidia.com/dynamo-discovery-backend": "etcd",
            "nvidia.com/dynamo-kube-discovery-mode": "container",
            "nvidia.com/vllm-distributed-executor-backend": "mp",
            "unrelated": "x",
        },
    )
    g["spec"]["annotations"] = {"owner": "team-a"}
    (dcd,) = generate_dcds(typed(g))
    annotations = dcd.body["spec"]["podTemplate"]["metadata"]["annotations"]
    assert annotations == {
        "owner": "team-a",
        "nvidia.com/enable-metrics": "true",
        "nvidia.com/dynamo-discovery-backend": "etcd",
        "nvidia.com/dynamo-kube-discovery-mode": "container",
        "nvidia.com/vllm-distributed-executor-backend": "mp",
    }
    # upstream generateSingleDCD writes no DCD annotation (docs/parity.md, object metadata)
    assert "annotations" not in dcd.body["metadata"]


def test_planner_and_epp_defaults():
    planner = component("planner", "planner")
    epp = component("epp", "epp", eppConfig={"configMapRef": {"name": "c", "key": "k"}})
    own_sa = component("planner2", "planner")
    own_sa["podTemplate"]["spec"]["serviceAccountName"] = "mine"
    dcds = by_name(generate_dcds(typed(graph(components=[planner, epp, own_sa]))))
    planner_spec = dcds["x-planner"].body["spec"]["podTemplate"]["spec"]
    assert planner_spec["serviceAccountName"] == "planner-serviceaccount"
    # set over the planner's own account, as upstream generateSingleDCD (docs/pod-rules.md)
    own = dcds["x-planner2"].body["spec"]["podTemplate"]["spec"]
    assert own["serviceAccountName"] == "planner-serviceaccount"
    epp_template = dcds["x-epp"].body["spec"]["podTemplate"]
    assert epp_template["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false"


def test_api_example_4_and_11_uninterpreted_fields_copied_except_provider_override():
    fe = component(
        "Frontend",
        "frontend",
        containers=[main_container(), {"name": "router", "image": "r:1"}],
        frontendSidecar="router",
        providerOverride={"grove": {"x": 1}},
    )
    epp = component("epp", "epp", eppConfig={"configMapRef": {"name": "epp-config"}})
    g = graph("u", [fe, epp], priorityClassName="high")
    dcds = by_name(generate_dcds(typed(g)))
    assert dcds["u-frontend"].body["spec"]["frontendSidecar"] == "router"
    assert "providerOverride" not in dcds["u-frontend"].body["spec"]
    assert dcds["u-epp"].body["spec"]["eppConfig"] == {"configMapRef": {"name": "epp-config"}}
    for dcd in dcds.values():
        assert "priorityClassName" not in dcd.body["spec"]
    # the input graph is not modified
    assert g["spec"]["components"][0]["providerOverride"] == {"grove": {"x": 1}}


def checkpoint_component(policy=None):
    checkpoint = {"enabled": True, "checkpointRef": "ck1"}
    if policy:
        checkpoint["startupPolicy"] = policy
    return component("decode", "decode", replicas=2, experimental={"checkpoint": checkpoint})


def test_checkpoint_wait_not_ready_forces_zero_replicas():
    g = graph(components=[checkpoint_component("WaitForCheckpoint")])
    (dcd,) = generate_dcds(typed(g), env=Environment(checkpoint_ready={"ck1": False}))
    assert dcd.body["spec"]["replicas"] == 0
    (dcd,) = generate_dcds(typed(g), env=Environment(checkpoint_ready={"ck1": True}))
    assert dcd.body["spec"]["replicas"] == 2
    annotations = pod_template(source_of(dcd, graph="x"), role="main", env=Environment())[
        "metadata"
    ]["annotations"]
    assert annotations["nvidia.com/dynamo-checkpoint-restore-candidate"] == "true"
    assert annotations["nvidia.com/dynamo-checkpoint-name"] == "ck1"


def test_checkpoint_immediate_default_keeps_replicas():
    (dcd,) = generate_dcds(typed(graph(components=[checkpoint_component()])))
    assert dcd.body["spec"]["replicas"] == 2
    assert dcd.body["spec"]["experimental"]["checkpoint"]["startupPolicy"] == "Immediate"


def test_replicas_unset_is_one_as_upstream_admission_defaults_it():
    # upstream's DGD defaulting webhook (dynamographdeployment_handler.go) sets replicas 1 on
    # every component that leaves it unset, before its reconciler generates the DCDs
    (dcd,) = generate_dcds(typed(graph(components=[component("decode", "decode")])))
    assert dcd.body["spec"]["replicas"] == 1
    explicit = component("decode", "decode") | {"replicas": 3}
    (dcd,) = generate_dcds(typed(graph(components=[explicit])))
    assert dcd.body["spec"]["replicas"] == 3


def test_upstream_bookkeeping_never_written():
    c = component("decode", "decode")
    c["podTemplate"]["metadata"] = {
        "labels": {"nvidia.com/dynamo-worker-hash": "abc"},
        "annotations": {"nvidia.com/dynamo-operator-origin-version": "1.4.0"},
    }
    (dcd,) = generate_dcds(typed(graph(components=[c])))
    assert "nvidia.com/dynamo-worker-hash" not in repr(dcd.body)
    assert "nvidia.com/dynamo-operator-origin-version" not in repr(dcd.body)


def test_dcd_metadata_is_upstreams():
    """Upstream ``generateSingleDCD`` (``internal/dynamo/graph.go``): labels = the component's
    own ``podTemplate.metadata.labels`` (taken before the graph's ``spec.labels`` are merged
    into the template), then ``nvidia.com/dynamo-component``, ``-namespace`` and
    ``-graph-deployment-name``; no annotations. The graph's ``spec.labels``/``annotations`` are
    in the DCD's pod template (``applyDGDTemplateDefaults``)."""
    c = component("decode", "decode")
    c["podTemplate"]["metadata"] = {"labels": {"team": "b"}, "annotations": {"note": "n"}}
    g = graph(components=[c], labels={"tier": "gold"})
    g["spec"]["annotations"] = {"owner": "team-a"}
    (dcd,) = generate_dcds(typed(g))
    meta = dcd.body["metadata"]
    assert meta["labels"] == {
        "team": "b",
        "nvidia.com/dynamo-component": "decode",
        "nvidia.com/dynamo-namespace": "ns-x",
        "nvidia.com/dynamo-graph-deployment-name": "x",
    }
    assert "annotations" not in meta
    template = dcd.body["spec"]["podTemplate"]["metadata"]
    assert template["labels"] == {"tier": "gold", "team": "b"}
    assert template["annotations"] == {"owner": "team-a", "note": "n"}
