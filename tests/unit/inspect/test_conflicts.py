"""``conflicts``: rows with owner, values and remedy (golden files, human and JSON)."""

from __future__ import annotations

import orjson
import pytest

from syncagent.cli.conflicts import conflictrows, fightevents
from syncagent.cli.conflicts.fieldpaths import show, value_at
from syncagent.cli.pathways import PROGRAMS
from syncagent.programs import fights
from syncagent.programs.fights import details
from syncagent.ssa import Conflict
from syncagent.ssa.fights import Fight
from tests.unit.support.plan import NS, check_golden, sample_records


def _rows() -> list[conflictrows.ConflictRow]:
    return conflictrows.rows(sample_records(), policy=PROGRAMS.takeover_policy)


def test_rows_carry_owner_values_and_remedy() -> None:
    by_path = {r.path: r for r in _rows()}
    image = by_path[".spec.template.spec.containers[name=main].image"]
    assert image.subject == f"Deployment/{NS}/g-prefill"
    assert (image.manager, image.operation) == ("other-team", "Update")
    assert (image.ours, image.live) == ('"img:1"', '"other:1"')
    assert image.remedy.kind == "force"
    assert "yield" in image.remedy.text
    upstream = by_path[".metadata.labels.nvidia.com/old"]
    assert upstream.remedy.kind == "take-over"
    refused = by_path[".metadata.labels.team"]
    assert (refused.ours, refused.live, refused.manager) == ('"a"', '"b"', "team-b")
    assert refused.remedy.kind == "yield"  # a non-forced apply fails instead


@pytest.mark.parametrize(
    ("conflict", "operation", "taken", "kind"),
    [
        (
            Conflict(".spec.replicas", "kube-controller-manager", "autoscaling/v1"),
            "Update/scale",
            False,
            "hand-over",
        ),
        (Conflict(".spec.replicas", "kubectl"), "Apply", False, "hand-over"),
        # A hand edit is put back: kubectl is never taken over.
        (Conflict(".spec.selector", "kubectl-edit", "apps/v1"), "Update", False, "force"),
        (Conflict(".spec.selector", "manager", "apps/v1"), "Update", True, "take-over"),
        (Conflict(".spec.selector", "syncagent/grove"), "Apply", False, "fix-contract"),
        (Conflict(".spec.selector", "argocd-controller"), "Apply", False, "force"),
    ],
)
def test_remedies(conflict: Conflict, operation: str, taken: bool, kind: str) -> None:
    remedy = conflictrows.remedy_for(
        conflict,
        operation=operation,
        our_manager="syncagent/workloads",
        ours="2",
        live="5",
        taken=taken,
    )
    assert remedy.kind == kind


def test_an_upstream_label_of_another_prefix_is_forced_not_taken() -> None:
    records = sample_records()
    subject = f"Deployment/{NS}/g-decode"
    live = records.real[subject]
    live["metadata"]["labels"]["team"] = "search"
    live["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:labels"]["f:team"] = {}
    taken = conflictrows.taken_by(
        PROGRAMS.takeover_policy, live, Conflict(".metadata.labels.team", "manager")
    )
    assert not taken
    upstream = conflictrows.taken_by(
        PROGRAMS.takeover_policy, live, Conflict(".metadata.labels.nvidia.com/old", "manager")
    )
    assert upstream


def test_hand_over_is_two_steps_with_the_live_value() -> None:
    remedy = conflictrows.remedy_for(
        Conflict(".spec.replicas", "kube-controller-manager", "autoscaling/v1"),
        operation="Update/scale",
        our_manager="syncagent/workloads",
        ours="2",
        live="5",
    )
    assert "1)" in remedy.text
    assert "2)" in remedy.text
    assert "5" in remedy.text


def test_operation_comes_from_the_owners_entry() -> None:
    live = {
        "metadata": {
            "managedFields": [
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "subresource": "scale",
                    "fieldsV1": {"f:spec": {"f:replicas": {}}},
                }
            ]
        }
    }
    assert conflictrows.operation_of(live, Conflict(".spec.replicas", "kubectl")) == "Update/scale"
    assert conflictrows.operation_of(live, Conflict(".spec.x", "other")) == "Apply"


@pytest.mark.parametrize(
    ("path", "want"),
    [
        (".metadata.labels.nvidia.com/dynamo-component", '"frontend"'),
        (".spec.ports[port=8000,protocol=TCP].targetPort", '"http"'),
        ('.spec.ports[port=8000,protocol="TCP"].targetPort', '"http"'),
        (".spec.finalizers[=a.b/c]", '"a.b/c"'),
        (".spec.list[1]", "2"),
        (".spec.missing", "(absent)"),
    ],
)
def test_value_at_readable_paths(path: str, want: str) -> None:
    obj = {
        "metadata": {"labels": {"nvidia.com/dynamo-component": "frontend", "nvidia.com": "x"}},
        "spec": {
            "ports": [{"port": 8000, "protocol": "TCP", "targetPort": "http"}],
            "finalizers": ["a.b/c"],
            "list": [1, 2],
        },
    }
    assert show(*value_at(obj, path)) == want


def test_no_conflicts_message() -> None:
    assert "no conflicts" in conflictrows.to_text([], graph="DynamoGraphDeployment/demo/g")


def test_json_rows() -> None:
    doc = orjson.loads(conflictrows.to_json(_rows(), graph="DynamoGraphDeployment/demo/g"))
    assert doc["graph"] == "DynamoGraphDeployment/demo/g"
    assert {c["remedy"] for c in doc["conflicts"]} == {"force", "take-over", "yield"}


def test_golden_text() -> None:
    check_golden(
        "conflicts.txt", conflictrows.to_text(_rows(), graph="DynamoGraphDeployment/demo/g")
    )


def test_golden_json() -> None:
    check_golden(
        "conflicts.json", conflictrows.to_json(_rows(), graph="DynamoGraphDeployment/demo/g")
    )


def _fight_event(**overrides) -> dict:
    fight = Fight(
        subject=f"Deployment/{NS}/g-frontend",
        manager="syncagent/workloads",
        other="hpa-like",
        paths=(".spec.replicas",),
        takebacks=3,
        window=300.0,
        backoff=60.0,
    )
    event = {
        "metadata": {"annotations": {fights.ANNOTATION: details(fight)}},
        "reason": "FieldFight",
        "type": "Warning",
        "message": fight.describe(),
        "count": 1,
        "lastTimestamp": "2026-11-29T16:00:00Z",
    }
    return {**event, **overrides}


def test_fights_are_read_back_from_their_events() -> None:
    other = _fight_event(reason="ForcedConflict")
    (row,) = fightevents.rows([_fight_event(), other])
    assert (row.subject, row.other, row.manager, row.paths) == (
        f"Deployment/{NS}/g-frontend",
        "hpa-like",
        "syncagent/workloads",
        (".spec.replicas",),
    )
    assert (row.backoff_text, row.count, row.extended) == ("1m", 1, False)
    text = conflictrows.to_text([], graph="DynamoGraphDeployment/demo/g", fights=[row])
    assert "no conflicts" in text
    assert "Field fights" in text
    line = next(line for line in text.splitlines() if line.startswith("Deployment/"))
    assert line.split() == [
        f"Deployment/{NS}/g-frontend",
        ".spec.replicas",
        "hpa-like",
        "syncagent/workloads",
        "1m",
        "1",
        "2026-11-29T16:00:00Z",
    ]
    doc = orjson.loads(conflictrows.to_json([], graph="DynamoGraphDeployment/demo/g", fights=[row]))
    assert doc["fights"][0]["manager"] == "hpa-like"
    assert doc["fights"][0]["paths"] == [".spec.replicas"]


def test_a_fight_event_without_details_still_lists_its_message() -> None:
    (row,) = fightevents.rows([_fight_event(metadata={})])
    assert (row.subject, row.other, row.backoff_text) == ("?", "?", "?")
    assert "hpa-like" in row.message
