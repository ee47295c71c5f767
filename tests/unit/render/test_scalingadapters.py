"""The scaling adapters a graph asks for, with the values upstream's graph reconciler writes
(dgd_scaling_adapters_reconciler.go and its controller test)."""

from __future__ import annotations

from syncagent.kube.objects import OwnerRef
from syncagent.render.scalingadapters import (
    Scale,
    adapter_name,
    adapter_status,
    adapters,
    pod_selector,
    scale_patch,
    scales,
)
from tests.support.graphs import component, graph, typed

OWNER = OwnerRef("nvidia.com/v1beta1", "DynamoGraphDeployment", "test-dgd", "uid-1")


def _graph(*components: dict) -> dict:
    return graph("default", "test-dgd", list(components))


def test_one_adapter_per_component_that_asks_for_one_named_as_upstream() -> None:
    doc = _graph(
        component("Frontend", "frontend", replicas=2, scalingAdapter={}),
        component("decode", "decode", replicas=3, scalingAdapter={}),
        component("prefill", "prefill", replicas=4),
    )
    made = adapters(typed(doc), owner=OWNER)
    assert {a.content.name: a.replicas for a in made} == {
        "test-dgd-frontend": 2,
        "test-dgd-decode": 3,
    }


def test_the_seed_replicas_default_to_one() -> None:
    doc = _graph(component("worker", "worker", replicas=None, scalingAdapter={}))
    (made,) = adapters(typed(doc), owner=OWNER)
    assert made.replicas == 1
    assert made.seed()["spec"]["replicas"] == 1


def test_content_is_labelled_and_references_the_component_without_replicas() -> None:
    doc = _graph(component("Frontend", "frontend", replicas=2, scalingAdapter={}))
    (made,) = adapters(typed(doc), owner=OWNER)
    body = made.content.manifest()
    assert body["apiVersion"] == "nvidia.com/v1beta1"
    assert body["kind"] == "DynamoGraphDeploymentScalingAdapter"
    assert body["metadata"]["namespace"] == "default"
    assert body["metadata"]["labels"] == {
        "nvidia.com/dynamo-graph-deployment-name": "test-dgd",
        "nvidia.com/dynamo-component": "Frontend",
    }
    assert body["spec"] == {"dgdRef": {"name": "test-dgd", "componentName": "Frontend"}}
    assert made.content.manager == "syncagent/scaling-adapters"


def test_the_seed_is_controlled_by_the_graph() -> None:
    doc = _graph(component("decode", "decode", replicas=0, scalingAdapter={}))
    (made,) = adapters(typed(doc), owner=OWNER)
    seed = made.seed()
    (ref,) = seed["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "DynamoGraphDeployment",
        "test-dgd",
        "uid-1",
        True,
    )
    assert seed["spec"]["replicas"] == 0
    assert "replicas" not in made.content.body["spec"]


def test_no_adapter_without_scaling_adapter() -> None:
    doc = _graph(component("Frontend", "frontend", replicas=2))
    assert adapters(typed(doc), owner=OWNER) == []


def test_name_lowercases_the_component_only() -> None:
    assert adapter_name("My-Graph", "Frontend") == "My-Graph-frontend"


def test_pod_selector_is_what_labels_selector_from_set_prints() -> None:
    # labels.SelectorFromSet sorts its keys.
    assert pod_selector("test-dgd", "decode") == (
        "nvidia.com/dynamo-component=decode,nvidia.com/dynamo-graph-deployment-name=test-dgd"
    )


def test_scales_are_the_adapted_components_whose_adapter_replicas_differ() -> None:
    doc = _graph(
        component("Frontend", "frontend", replicas=2, scalingAdapter={}),
        component("decode", "decode", replicas=None, scalingAdapter={}),
        component("prefill", "prefill", replicas=3, scalingAdapter={}),
        component("other", "worker", replicas=1),
    )
    wanted = {"Frontend": 2, "decode": 4, "other": 5}
    assert scales(typed(doc), wanted) == [Scale("decode", 1, 1, 4)]


def test_the_patch_tests_each_name_before_it_sets_replicas_by_index() -> None:
    assert scale_patch([Scale("decode", 1, 1, 0), Scale("prefill", 2, 3, 5)]) == [
        {"op": "test", "path": "/spec/components/1/name", "value": "decode"},
        {"op": "add", "path": "/spec/components/1/replicas", "value": 0},
        {"op": "test", "path": "/spec/components/2/name", "value": "prefill"},
        {"op": "add", "path": "/spec/components/2/replicas", "value": 5},
    ]


def test_adapter_status_has_replicas_and_the_selector_hpa_reads() -> None:
    assert adapter_status("test-dgd", "decode", replicas=3, last_scale_time=None) == {
        "replicas": 3,
        "selector": (
            "nvidia.com/dynamo-component=decode,nvidia.com/dynamo-graph-deployment-name=test-dgd"
        ),
    }
    stamped = adapter_status("g", "c", replicas=0, last_scale_time="2026-01-01T00:00:00Z")
    assert stamped["lastScaleTime"] == "2026-01-01T00:00:00Z"
