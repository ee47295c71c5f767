"""The DisaggregatedSet object (disaggregatedset.md §3.2) and its template hash (§4.1)."""

from __future__ import annotations

from syncagent.programs.disaggregatedset.render import (
    TEMPLATE_HASH,
    render_disaggregated_set,
    service_selector,
    template_hash,
    with_template_hash,
)
from syncagent.render import Environment, generate_dcds, leader_worker_set, source_of
from tests.support.graphs import served_graph as graph
from tests.support.graphs import typed, worker

ENV = Environment()


def test_shape_of_example_graph() -> None:
    out = render_disaggregated_set(typed(graph()), env=ENV)
    body = out.rendered.body
    assert body["apiVersion"] == "disaggregatedset.x-k8s.io/v1"
    assert body["metadata"]["name"] == "vllm-disagg"
    assert body["metadata"]["labels"] == {
        "nvidia.com/dynamo-graph-deployment-name": "vllm-disagg",
        "nvidia.com/selector": "vllm-disagg",
    }
    assert "ownerReferences" not in body["metadata"]
    assert out.rendered.create_manifest()["metadata"]["ownerReferences"][0]["uid"] == (
        "uid-vllm-disagg"
    )
    roles = body["spec"]["roles"]
    assert [r["name"] for r in roles] == ["decode", "prefill"]
    assert set(body["spec"]) == {"roles"}  # never slices / placementPolicy
    for role in roles:
        spec = role["spec"]
        assert "scaling" not in role
        assert spec["replicas"] == 1
        assert spec["startupPolicy"] == "LeaderCreated"
        assert spec["rolloutStrategy"] == {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0, "partition": 0},
        }
        assert spec["networkConfig"] == {"subdomainPolicy": "Shared"}
        lwt = spec["leaderWorkerTemplate"]
        assert lwt["size"] == 2
        assert lwt["restartPolicy"] == "RecreateGroupOnPodRestart"
        for template in (lwt["leaderTemplate"], lwt["workerTemplate"]):
            assert template["spec"]["serviceAccountName"] == "vllm-disagg-k8s-service-discovery"
    assert out.roles == {"decode": "decode", "prefill": "prefill"}


def test_templates_equal_the_dcd_leader_worker_set() -> None:
    g = graph()
    ds = render_disaggregated_set(typed(g), env=ENV).rendered.body
    for dcd in generate_dcds(typed(g), env=ENV):
        if dcd.body["spec"]["name"] not in ("decode", "prefill"):
            continue
        lws = leader_worker_set(source_of(dcd, graph="vllm-disagg"), env=ENV).body
        role = next(r for r in ds["spec"]["roles"] if r["name"] == dcd.body["spec"]["name"])
        ours = role["spec"]["leaderWorkerTemplate"]
        theirs = lws["spec"]["leaderWorkerTemplate"]
        assert ours["leaderTemplate"] == theirs["leaderTemplate"]
        assert ours["workerTemplate"] == theirs["workerTemplate"]


def test_graph_labels_reach_ds_and_templates() -> None:
    body = render_disaggregated_set(typed(graph(labels={"env": "prod"})), env=ENV).rendered.body
    assert body["metadata"]["labels"]["env"] == "prod"
    for role in body["spec"]["roles"]:
        lwt = role["spec"]["leaderWorkerTemplate"]
        assert lwt["leaderTemplate"]["metadata"]["labels"]["env"] == "prod"
        assert lwt["workerTemplate"]["metadata"]["labels"]["env"] == "prod"


def test_gated_roles_are_all_zero() -> None:
    body = render_disaggregated_set(typed(graph()), env=ENV, gated=True).rendered.body
    assert [r["spec"]["replicas"] for r in body["spec"]["roles"]] == [0, 0]


def test_single_node_worker_is_not_a_role() -> None:
    g = graph(
        components=[
            worker("decode", "decode"),
            worker("prefill", "prefill"),
            worker("extra", "worker", nodes=1),
        ]
    )
    body = render_disaggregated_set(typed(g), env=ENV).rendered.body
    assert [r["name"] for r in body["spec"]["roles"]] == ["decode", "prefill"]


def test_template_hash_ignores_empty_values_and_key_order() -> None:
    roles = render_disaggregated_set(typed(graph()), env=ENV).rendered.body["spec"]["roles"]
    f = template_hash(roles)
    assert len(f) == 16
    padded = [
        {
            **r,
            "spec": {
                **r["spec"],
                "leaderWorkerTemplate": {**r["spec"]["leaderWorkerTemplate"], "x": {}, "y": None},
            },
        }
        for r in roles
    ]
    assert template_hash(padded) == f
    # replicas and role metadata are not hashed
    scaled = [{**r, "spec": {**r["spec"], "replicas": 7}, "metadata": {"a": "b"}} for r in roles]
    assert template_hash(scaled) == f
    # a template change and a reorder are
    assert template_hash(list(reversed(roles))) != f
    changed = render_disaggregated_set(typed(graph(labels={"env": "prod"})), env=ENV).rendered.body[
        "spec"
    ]["roles"]
    assert template_hash(changed) != f


def test_with_template_hash_sets_role_metadata_only() -> None:
    rendered = render_disaggregated_set(typed(graph()), env=ENV).rendered
    hashed = with_template_hash(rendered, "0123456789abcdef")
    for role in hashed.body["spec"]["roles"]:
        assert role["metadata"] == {"annotations": {TEMPLATE_HASH: "0123456789abcdef"}}
    assert "metadata" not in rendered.body["spec"]["roles"][0]


def test_service_selector() -> None:
    assert service_selector("vllm-disagg", "decode", "b47ae5a3") == {
        "disaggregatedset.x-k8s.io/name": "vllm-disagg",
        "disaggregatedset.x-k8s.io/role": "decode",
        "disaggregatedset.x-k8s.io/revision": "b47ae5a3",
        "role": "leader",
    }
    assert "disaggregatedset.x-k8s.io/revision" not in service_selector("d", "decode", None)
