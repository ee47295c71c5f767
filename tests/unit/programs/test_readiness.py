"""Workload and DCD readiness (spec/lifecycle.md §3 acceptance examples)."""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.programs.readiness import (
    dcd_done,
    dcd_readiness,
    deployment_ready,
    leader_worker_set_ready,
    workload_ready,
)


def deployment(desired: int | None = 2, **status: Any) -> dict[str, Any]:
    spec = {} if desired is None else {"replicas": desired}
    base = {
        "observedGeneration": 1,
        "updatedReplicas": 2,
        "availableReplicas": 2,
        "replicas": 2,
        "conditions": [{"type": "Available", "status": "True"}],
    }
    return {"metadata": {"generation": 1}, "spec": spec, "status": base | status}


def lws(replicas: int | None = 2, generation: int = 1, **status: Any) -> dict[str, Any]:
    spec = {} if replicas is None else {"replicas": replicas}
    base = {
        "observedGeneration": 1,
        "readyReplicas": 2,
        "conditions": [{"type": "Available", "status": "True"}],
    }
    return {"metadata": {"generation": generation}, "spec": spec, "status": base | status}


def test_deployment_fully_rolled_out_and_available_is_ready():
    assert deployment_ready(deployment())


def test_deployment_surge_is_not_ready():
    assert not deployment_ready(deployment(desired=2, replicas=3))


@pytest.mark.parametrize(
    "change",
    [
        {"updatedReplicas": 1},
        {"availableReplicas": 1},
        {"observedGeneration": 0},
        {"conditions": [{"type": "Available", "status": "False"}]},
        {"conditions": []},
    ],
)
def test_deployment_not_ready_cases(change):
    assert not deployment_ready(deployment(**change))


def test_paused_deployment_is_never_ready():
    obj = deployment()
    obj["spec"]["paused"] = True
    assert not deployment_ready(obj)


def test_zero_replicas_is_ready_whatever_the_status():
    assert deployment_ready({"metadata": {"generation": 4}, "spec": {"replicas": 0}})
    assert leader_worker_set_ready({"metadata": {"generation": 4}, "spec": {"replicas": 0}})


def test_unset_replicas_means_one():
    obj = deployment(desired=None, updatedReplicas=1, availableReplicas=1, replicas=1)
    assert deployment_ready(obj)
    assert not deployment_ready(deployment(desired=None))  # status.replicas 2 != 1


def test_lws_ready_needs_current_generation():
    assert leader_worker_set_ready(lws())
    assert not leader_worker_set_ready(lws(generation=2))
    assert not leader_worker_set_ready(lws(readyReplicas=1))


def test_missing_or_deleting_workload_is_not_ready():
    assert not workload_ready("Deployment", None)
    obj = deployment()
    obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert not workload_ready("Deployment", obj)
    assert workload_ready("LeaderWorkerSet", lws())


def dcd(generation: int, observed: int, available: str, message: str = "") -> dict[str, Any]:
    return {
        "metadata": {"generation": generation, "name": "x-decode"},
        "status": {
            "observedGeneration": observed,
            "conditions": [{"type": "Available", "status": available, "message": message}],
        },
    }


def test_dcd_behind_its_generation_is_not_ready():
    result = dcd_readiness(dcd(5, 4, "True"))
    assert not result.ready
    assert result.reason == "status has not observed generation 5"


def test_dcd_not_available_reports_the_available_message():
    result = dcd_readiness(dcd(1, 1, "False", "Deployment x-decode is not ready"))
    assert result.reason == "Deployment x-decode is not ready"
    assert dcd_done(dcd(1, 1, "True"))
    assert not dcd_done(None)
