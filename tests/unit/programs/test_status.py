"""DGD and DCD status computation (spec/lifecycle.md §1, §3)."""

from __future__ import annotations

from syncagent.programs import status
from syncagent.programs.readiness import Readiness

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-02T00:00:00Z"


def test_all_ready_is_successful():
    result = status.result_of([("x-frontend", Readiness(True)), ("x-decode", Readiness(True))])
    assert (result.state, result.reason, result.message) == (
        "successful",
        "all_resources_are_ready",
        "All resources are ready",
    )


def test_not_ready_resources_are_listed_in_name_order():
    result = status.result_of(
        [("x-frontend", Readiness(False, "b")), ("x-decode", Readiness(False, "a"))]
    )
    assert result.state == "pending"
    assert result.reason == "some_resources_are_not_ready"
    assert result.message == "Resources not ready: x-decode: a; x-frontend: b"


def test_waiting_checkpoint_wins_over_ready():
    result = status.result_of(
        [("x-decode", Readiness(True))], waiting_checkpoints=[("decode", "ck1")]
    )
    assert (result.state, result.reason) == ("pending", "waiting_for_checkpoint")
    assert result.message == "Waiting for checkpoints: decode (ck1)"


def inp(result: status.GraphResult, **kw) -> status.GraphStatusInput:
    return status.GraphStatusInput(
        generation=3, result=result, routing={"pathway": "Component"}, **kw
    )


def test_graph_status_carries_ready_condition_and_generation():
    ready = status.GraphResult("successful", "all_resources_are_ready", "All resources are ready")
    built = status.graph_status(inp(ready), previous=None, now=NOW)
    cond = status.find(built["conditions"], "Ready")
    assert cond["status"] == "True"
    assert cond["observedGeneration"] == 3
    assert built["observedGeneration"] == 3
    assert built["state"] == "successful"
    assert built["routing"] == {"pathway": "Component"}
    assert cond["lastTransitionTime"] == NOW


def test_transition_time_moves_only_when_the_status_changes():
    pending = status.GraphResult("pending", "some_resources_are_not_ready", "a")
    first = status.graph_status(inp(pending), previous=None, now=NOW)
    other_message = status.GraphResult("pending", "some_resources_are_not_ready", "b")
    second = status.graph_status(inp(other_message), previous=first, now=LATER)
    assert status.find(second["conditions"], "Ready")["lastTransitionTime"] == NOW
    ready = status.GraphResult("successful", "all_resources_are_ready", "All resources are ready")
    third = status.graph_status(inp(ready), previous=second, now=LATER)
    assert status.find(third["conditions"], "Ready")["lastTransitionTime"] == LATER


def test_identical_status_needs_no_write():
    pending = status.GraphResult("pending", "some_resources_are_not_ready", "a")
    first = status.graph_status(inp(pending), previous=None, now=NOW)
    again = status.graph_status(inp(pending), previous=first, now=LATER)
    assert status.status_equal(again, first)
    reordered = {**first, "conditions": list(reversed(first["conditions"]))}
    assert status.status_equal(again, reordered)
    assert not status.status_equal(again, {**first, "state": "successful"})
    assert not status.status_equal(again, {**first, "restart": {"phase": "Completed"}})


def test_dcd_status_ready_and_not_ready():
    ready = status.component_status(
        status.ComponentStatusInput(
            generation=2, kind="Deployment", ready=True, message="Deployment x is ready"
        ),
        previous=None,
        now=NOW,
    )
    available = status.find(ready["conditions"], "Available")
    assert (available["status"], available["reason"]) == ("True", "DeploymentReady")
    assert status.find(ready["conditions"], "DynamoComponentReady")["reason"] == "ComponentReady"
    assert ready["observedGeneration"] == 2
    waiting = status.component_status(
        status.ComponentStatusInput(generation=2, kind="LeaderWorkerSet", message="m"),
        previous=ready,
        now=LATER,
    )
    assert status.find(waiting["conditions"], "Available")["reason"] == "LeaderWorkerSetNotReady"


def test_dcd_error_status():
    failed = status.component_status(
        status.ComponentStatusInput(generation=1, error="no multinode orchestrator available"),
        previous=None,
        now=NOW,
    )
    available = status.find(failed["conditions"], "Available")
    assert (available["status"], available["reason"]) == ("False", "Reconciling")
    assert available["message"] == (
        "Failed to reconcile DynamoComponentDeployment: no multinode orchestrator available"
    )


def test_replica_status_from_a_deployment():
    dep = {
        "status": {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    }
    assert status.replica_status("Deployment", "x-frontend", dep, runtime_namespace="ns-x") == {
        "componentKind": "Deployment",
        "componentNames": ["x-frontend"],
        "runtimeNamespace": "ns-x",
        "replicas": 1,
        "updatedReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
    }
    lws = status.replica_status("LeaderWorkerSet", "x-p-0", None, runtime_namespace="ns-x")
    assert "availableReplicas" not in lws
    assert lws["replicas"] == 0
