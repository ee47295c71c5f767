"""Plan rows, exit codes and the stable JSON of ``plan -o json`` (golden files)."""

from __future__ import annotations

import copy

import orjson

from syncagent.inspect import report
from syncagent.inspect.planner import InputRow
from syncagent.ssa import ChangeSetEntry
from tests.unit.support.plan import NS, check_golden, deployment, sample_records, sample_run


def _plan() -> report.Plan:
    return report.build(sample_run(sample_records()))


def _row(plan: report.Plan, subject: str) -> report.Row:
    return next(r for r in plan.rows if r.subject == subject)


def test_each_action_is_reported() -> None:
    plan = _plan()
    actions = {r.subject: r.action for r in plan.rows}
    assert actions == {
        f"Service/{NS}/g-frontend": "created",
        f"Deployment/{NS}/g-frontend": "configured",
        f"Deployment/{NS}/g-worker": "unchanged",
        f"Deployment/{NS}/g-prefill": "conflict",
        f"Deployment/{NS}/g-decode": "configured",
        f"Deployment/{NS}/g-old": "would-delete",
        f"Service/{NS}/dynamo-model-1234abcd": "conflict",
    }
    assert plan.exit_code == 2


def test_diff_shows_the_change_and_not_server_defaults() -> None:
    row = _row(_plan(), f"Deployment/{NS}/g-frontend")
    assert "-  replicas: 1" in row.diff
    assert "+  replicas: 3" in row.diff
    assert not any("progressDeadlineSeconds" in line and line[0] in "+-" for line in row.diff)
    assert not any("resourceVersion" in line or "managedFields" in line for line in row.diff)


def test_created_object_is_all_additions() -> None:
    row = _row(_plan(), f"Service/{NS}/g-frontend")
    body = [line for line in row.diff if not line.startswith("@@")]
    assert body
    assert all(line.startswith("+") for line in body)


def test_takeover_step_is_shown_and_its_conflicts_are_not() -> None:
    row = _row(_plan(), f"Deployment/{NS}/g-decode")
    assert row.takeover is not None
    moves = {(m.source, m.target) for m in row.takeover.moves}
    assert moves == {("manager", "syncagent/ownership"), ("manager", "syncagent/workloads")}
    assert row.conflicts == []  # the conflict with "manager" is resolved by the takeover
    assert row.changed


def test_conflict_names_the_owner() -> None:
    row = _row(_plan(), f"Deployment/{NS}/g-prefill")
    assert [(c.path, c.manager) for c in row.conflicts] == [
        (".spec.template.spec.containers[name=main].image", "other-team")
    ]


def test_exit_code_zero_when_nothing_changes() -> None:
    records = sample_records()
    subject = f"Deployment/{NS}/g-worker"
    records.order = [subject]
    plan = report.build(sample_run(records))
    assert [r.action for r in plan.rows] == ["unchanged"]
    assert plan.exit_code == 0
    assert "(no changes)" in report.to_text(plan)


def test_errors_exit_one() -> None:
    run = sample_run(sample_records())
    run.errors = ["DynamoGraphDeployment/demo/g: spec.components[0].name: required"]
    plan = report.build(run)
    assert plan.exit_code == 1
    assert orjson.loads(report.to_json(plan))["exitCode"] == 1


def test_input_row_ignores_the_plan_manager_entry() -> None:
    live = deployment("g", replicas=1)
    entry = ChangeSetEntry(
        action="configured",
        subject=f"Deployment/{NS}/g",
        object=copy.deepcopy(live),
        manager="syncagent-plan",
        before=live,
        differences=("managedFields[manager=syncagent-plan]",),
    )
    row = report.input_row(entry)
    assert row.action == "unchanged"
    assert row.input


def test_json_schema_fields() -> None:
    run = sample_run(sample_records())
    run.inputs = [
        InputRow(
            f"Deployment/{NS}/g",
            ChangeSetEntry("created", f"Deployment/{NS}/g", deployment("g", replicas=1), "x"),
        )
    ]
    doc = orjson.loads(report.to_json(report.build(run)))
    assert doc["schema"] == report.SCHEMA_VERSION
    assert set(doc) == {
        "schema",
        "changes",
        "exitCode",
        "summary",
        "errors",
        "objects",
        "otherWrites",
        "statusWrites",
        "events",
    }
    assert set(doc["summary"]) == {
        "created",
        "configured",
        "unchanged",
        "conflict",
        "wouldDelete",
        "takeover",
    }
    keys = {
        "subject",
        "kind",
        "namespace",
        "name",
        "action",
        "input",
        "managers",
        "differences",
        "diff",
        "conflicts",
        "takeover",
    }
    assert all(set(o) == keys for o in doc["objects"])
    assert doc["objects"][0]["input"] is True
    assert {o["action"] for o in doc["objects"]} <= set(report.ACTIONS)


def test_golden_text() -> None:
    check_golden("plan.txt", report.to_text(_plan()))


def test_golden_json() -> None:
    check_golden("plan.json", report.to_json(_plan()))


def test_writes_around_the_engine_count_as_changes() -> None:
    records = sample_records()
    records.order = [f"Deployment/{NS}/g-worker"]
    records.other_writes = ["PATCH /apis/grove.io/v1alpha1/namespaces/demo/podcliques/x/scale"]
    plan = report.build(sample_run(records))
    assert plan.exit_code == 2
    assert "also (dry run): PATCH /apis/grove.io" in report.to_text(plan)
