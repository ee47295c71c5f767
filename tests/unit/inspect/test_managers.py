"""``managers``: live managedFields checked against the fieldmanagers/ contracts."""

from __future__ import annotations

import orjson

from syncagent.cli.managers import managerchecks
from syncagent.cli.pathways import PROGRAMS
from tests.unit.support.plan import DCD_UID, GRAPH_UID, NS, controller_ref, entry_mf


def _graph() -> dict:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "g",
            "namespace": NS,
            "uid": GRAPH_UID,
            "managedFields": [
                entry_mf("kubectl-client-side-apply", {"f:spec": {}}, operation="Update")
            ],
        },
    }


def _dcd(*entries: dict) -> dict:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": "g-frontend",
            "namespace": NS,
            "uid": DCD_UID,
            "ownerReferences": [controller_ref("DynamoGraphDeployment", "g", GRAPH_UID)],
            "managedFields": list(entries),
        },
    }


def _kinds(report: managerchecks.ObjectReport) -> list[tuple[str, str]]:
    return [(f.kind, f.manager) for f in report.findings]


def test_clean_object_has_no_findings() -> None:
    dcd = _dcd(
        entry_mf(
            "syncagent/components",
            {"f:spec": {"f:replicas": {}}, "f:metadata": {"f:labels": {"f:a": {}}}},
        ),
        entry_mf(
            "syncagent/ownership",
            {"f:metadata": {"f:ownerReferences": {f'k:{{"uid":"{GRAPH_UID}"}}': {}}}},
        ),
        entry_mf("syncagent/component-status", {"f:status": {"f:x": {}}}, subresource="status"),
    )
    report = managerchecks.check(
        dcd, declared=PROGRAMS.field_managers(), policy=PROGRAMS.takeover_policy
    )
    assert report.findings == []
    assert report.bytes == len(orjson.dumps(dcd["metadata"]["managedFields"]))


def test_outside_contract_unknown_stale_and_missing() -> None:
    dcd = _dcd(
        entry_mf("syncagent/components", {"f:spec": {"f:replicas": {}}, "f:status": {"f:x": {}}}),
        entry_mf("syncagent/workloads", {"f:spec": {"f:replicas": {}}}),
        entry_mf("syncagent/renamed", {"f:spec": {"f:y": {}}}),
        entry_mf("manager", {"f:spec": {"f:z": {}}}, operation="Update"),
        entry_mf("kubectl-edit", {"f:metadata": {"f:labels": {"f:team": {}}}}, operation="Update"),
        entry_mf("syncagent/owner/gone-uid", {"f:metadata": {"f:ownerReferences": {}}}),
    )
    report = managerchecks.check(
        dcd, declared=PROGRAMS.field_managers(), policy=PROGRAMS.takeover_policy
    )
    kinds = _kinds(report)
    # What the upstream operator wrote is taken over; a user's kubectl label stays theirs.
    assert ("stale", "manager") in kinds
    assert not any(manager == "kubectl-edit" for _, manager in kinds)
    assert ("outside-contract", "syncagent/components") in kinds  # owns .status.x
    assert ("outside-contract", "syncagent/workloads") in kinds  # does not write DCDs
    assert ("unknown", "syncagent/renamed") in kinds
    assert ("stale", "syncagent/owner/gone-uid") in kinds
    assert ("missing", "syncagent/ownership") in kinds
    text = managerchecks.to_text([report])
    assert "owns .status.x (undeclared)" in text


def test_graph_objects_follow_owner_references() -> None:
    dcd = _dcd()
    child = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "g-frontend",
            "namespace": NS,
            "uid": "dep",
            "ownerReferences": [controller_ref("DynamoComponentDeployment", "g-frontend", DCD_UID)],
        },
    }
    unrelated = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "x", "namespace": NS, "uid": "x"},
    }
    found = managerchecks.graph_objects(_graph(), [child, unrelated, dcd])
    assert [o["kind"] for o in found] == [
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "Deployment",
    ]


def test_the_graph_itself_is_its_authors() -> None:
    reports = managerchecks.check_graph(
        _graph(), [], declared=PROGRAMS.field_managers(), policy=PROGRAMS.takeover_policy
    )
    assert reports[0].findings == []  # kubectl's entry on the graph is not stale
