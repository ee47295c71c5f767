"""The pure part of ``syncagent status``: live objects -> tree nodes, readiness, JSON."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from syncagent.cli.status import jsondocument, objectready
from syncagent.cli.status.treenodes import build, pod_template_labels
from tests.unit.support.statustree import NOW, conditions, live_object

WINDOW = timedelta(minutes=15)


def _template(**labels: str) -> dict[str, Any]:
    return {"template": {"metadata": {"labels": labels}, "spec": {}}}


def _cutover() -> tuple[dict, list[dict]]:
    """A graph mid-cutover: the old DCD Deployment and the new DisaggregatedSet both exist;
    the Service selects the new one's pods."""
    graph = live_object(
        "DynamoGraphDeployment",
        "g",
        status={
            "routing": {"pathway": "disaggregatedSet"},
            **conditions("Ready", "False", "migrating", "waiting for DisaggregatedSet/g"),
        },
    )
    graph["status"]["conditions"].append(
        {"type": "WorkloadPathway", "status": "True", "reason": "disaggregatedSet", "message": "m"}
    )
    dcd = live_object(
        "DynamoComponentDeployment", "g-w", owner=graph, status=conditions("Available", "True")
    )
    old = live_object(
        "Deployment",
        "g-w",
        owner=dcd,
        spec={"replicas": 2, **_template(app="w", gen="old")},
        status={"observedGeneration": 1, "readyReplicas": 2, "updatedReplicas": 2},
    )
    rs = live_object("ReplicaSet", "g-w-1", owner=old)
    pod = live_object(
        "Pod", "g-w-1-a", owner=rs, status={"phase": "Running", **conditions("Ready", "True")}
    )
    ds = live_object(
        "DisaggregatedSet",
        "g",
        owner=graph,
        spec={
            "roles": [
                {
                    "name": "w",
                    "spec": {
                        "leaderWorkerTemplate": {
                            "workerTemplate": {
                                "metadata": {"labels": {"app": "w", "gen": "new"}},
                                "spec": {},
                            }
                        }
                    },
                }
            ]
        },
        status=conditions("Ready", "False", "RolesNotReady", "role w: 0/1"),
    )
    svc = live_object("Service", "g-w", owner=graph, spec={"selector": {"app": "w", "gen": "new"}})
    return graph, [dcd, old, rs, pod, ds, svc]


def test_tree_follows_controller_references_under_the_program() -> None:
    graph, objects = _cutover()
    root = build(graph, objects, now=NOW, window=WINDOW)
    assert root.ref == "DynamoGraphDeployment/g"
    [program] = root.children
    assert (program.kind, program.name, program.ready) == ("Program", "disaggregatedSet", True)
    assert [c.ref for c in program.children] == [
        "DynamoComponentDeployment/g-w",
        "DisaggregatedSet/g",
        "Service/g-w",
    ]
    deployment = program.children[0].children[0]
    assert deployment.ref == "Deployment/g-w"
    assert deployment.controller == "DynamoComponentDeployment/g-w"
    # The ReplicaSet is passed through: its pod shows under the Deployment.
    assert [c.ref for c in deployment.children] == ["Pod/g-w-1-a"]
    assert deployment.children[0].controller == "ReplicaSet/g-w-1"


def test_a_service_names_the_workload_its_selector_matches() -> None:
    graph, objects = _cutover()
    service = next(
        n for n in build(graph, objects, now=NOW, window=WINDOW).walk() if n.kind == "Service"
    )
    assert service.selects == ["DisaggregatedSet/g"]
    assert service.ready is True
    objects[-1]["spec"]["selector"] = {"app": "w"}  # both generations
    service = next(
        n for n in build(graph, objects, now=NOW, window=WINDOW).walk() if n.kind == "Service"
    )
    assert service.selects == ["Deployment/g-w", "DisaggregatedSet/g"]
    objects[-1]["spec"]["selector"] = {"app": "nothing"}
    service = next(
        n for n in build(graph, objects, now=NOW, window=WINDOW).walk() if n.kind == "Service"
    )
    assert (service.selects, service.ready) == ([], False)


def test_a_service_matching_pod_labels_a_controller_added_selects_that_workload() -> None:
    graph, objects = _cutover()
    pod = objects[3]
    pod["metadata"]["labels"] = {"pod-template-hash": "1", "app": "w"}
    objects[-1]["spec"]["selector"] = {"pod-template-hash": "1"}  # on the pod, not the template
    root = build(graph, objects, now=NOW, window=WINDOW)
    service = next(n for n in root.walk() if n.kind == "Service")
    assert service.selects == ["Deployment/g-w"]


def test_not_ready_nodes_carry_the_reason_and_recent_events() -> None:
    graph, objects = _cutover()
    ds = objects[4]
    events = [
        {
            "involvedObject": {"uid": ds["metadata"]["uid"]},
            "type": "Normal",
            "reason": "Scaling",
            "message": "role w\n scaled",
            "count": 3,
            "lastTimestamp": "2026-01-01T11:58:00Z",
        },
        {
            "involvedObject": {"uid": ds["metadata"]["uid"]},
            "type": "Normal",
            "reason": "Old",
            "message": "before the window",
            "lastTimestamp": "2026-01-01T11:00:00Z",
        },
        {
            "involvedObject": {"uid": objects[0]["metadata"]["uid"]},
            "type": "Normal",
            "reason": "Quiet",
            "message": "a ready object's normal event",
            "eventTime": "2026-01-01T11:59:00.000001Z",
        },
    ]
    nodes = {n.ref: n for n in build(graph, objects, events, now=NOW, window=WINDOW).walk()}
    node = nodes["DisaggregatedSet/g"]
    assert (node.ready, node.reason) == (False, "RolesNotReady: role w: 0/1")
    assert [(e.reason, e.count, e.message, e.last_seen) for e in node.events] == [
        ("Scaling", 3, "role w scaled", "2026-01-01T11:58:00Z")
    ]
    assert nodes["DynamoComponentDeployment/g-w"].events == []
    assert nodes["DynamoGraphDeployment/g"].reason == "migrating: waiting for DisaggregatedSet/g"


def test_objects_of_other_graphs_stay_out() -> None:
    graph, objects = _cutover()
    other = live_object("DynamoGraphDeployment", "other")
    stray = live_object("Deployment", "x", owner=other, spec={"replicas": 1})
    refs = {n.ref for n in build(graph, [*objects, other, stray], now=NOW, window=WINDOW).walk()}
    assert "Deployment/x" not in refs
    assert "DynamoGraphDeployment/other" not in refs


def test_a_controller_loop_ends_the_branch() -> None:
    graph, objects = _cutover()
    dcd = objects[0]
    # The graph names its own DCD as its controller: a loop back to the root.
    graph["metadata"]["ownerReferences"] = [
        {"kind": dcd["kind"], "name": "g-w", "uid": dcd["metadata"]["uid"], "controller": True}
    ]
    refs = [n.ref for n in build(graph, [graph, *objects], now=NOW, window=WINDOW).walk()]
    assert refs.count("DynamoGraphDeployment/g") == 1
    assert refs.count("DynamoComponentDeployment/g-w") == 1


def test_readiness_rules() -> None:
    deployment = live_object(
        "Deployment",
        "d",
        spec={"replicas": 2},
        status={"observedGeneration": 1, "readyReplicas": 1, "updatedReplicas": 2},
    )
    assert objectready.of(deployment) == (False, "1/2 ready", "1 of 2 replicas ready, 2 updated")
    deployment["status"]["conditions"] = [
        {
            "type": "Progressing",
            "status": "False",
            "reason": "ProgressDeadlineExceeded",
            "message": "too slow",
        }
    ]
    assert objectready.of(deployment)[2] == "ProgressDeadlineExceeded: too slow"
    deployment["metadata"]["generation"] = 2
    assert objectready.of(deployment)[2].startswith("its controller has not observed")
    pod = live_object(
        "Pod",
        "p",
        status={
            "phase": "Pending",
            "containerStatuses": [
                {"state": {"waiting": {"reason": "ImagePullBackOff", "message": "no image"}}}
            ],
        },
    )
    assert objectready.of(pod) == (False, "Pending", "ImagePullBackOff: no image")
    assert objectready.of(live_object("LeaderWorkerSet", "l")) == (
        None,
        "no status reported yet",
        "",
    )
    lws = live_object("LeaderWorkerSet", "l", status=conditions("Available", "True"))
    assert objectready.of(lws) == (True, "Available", "")
    lws["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert objectready.of(lws)[0] is False


def test_pod_template_labels_found_at_any_depth() -> None:
    spec = {
        "leaderWorkerTemplate": {
            "leaderTemplate": {"metadata": {"labels": {"r": "l"}}},
            "workerTemplate": {"metadata": {"labels": {"r": "w"}}},
        },
        "other": [{"template": {"metadata": {"labels": {"r": "x"}}}}],
    }
    assert list(pod_template_labels(spec)) == [{"r": "l"}, {"r": "w"}, {"r": "x"}]


def test_json_document_shape() -> None:
    graph, objects = _cutover()
    doc = jsondocument.document(
        build(graph, objects, now=NOW, window=WINDOW), namespace="ns", generated="t"
    )
    assert doc["schema"] == "syncagent.dynamo.nvidia.com/status-v1"
    assert doc["ready"] is False
    tree = doc["tree"]
    assert set(tree) == {
        "kind",
        "name",
        "ready",
        "state",
        "reason",
        "controller",
        "managers",
        "events",
        "selects",
        "children",
    }
    assert tree["managers"] == [{"manager": "m-g", "operation": "Apply", "subresource": ""}]
    assert tree["children"][0]["kind"] == "Program"
