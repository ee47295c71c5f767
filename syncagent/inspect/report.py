"""A plan as rows, one per object: human text and the stable JSON (docs/plan-json-schema.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from fieldmanagers import ownership
from syncagent.inspect import diff
from syncagent.inspect.planapplier import Records
from syncagent.inspect.planner import INPUT_MANAGER, PlannedEvent, PlanRun, StatusWrite
from syncagent.programs.upstream_takeover import targets_for
from syncagent.ssa import ChangeSetEntry, Conflict
from syncagent.ssa.takeover import TakeoverPlan, TakeoverPolicy, plan_takeover

SCHEMA_VERSION = "syncagent.dynamo.nvidia.com/plan-v1"
ACTIONS = ("created", "configured", "unchanged", "conflict", "would-delete")
OWNERSHIP = ownership.MANAGER.name


@dataclass
class Row:
    subject: str
    action: str
    managers: list[str]
    input: bool = False
    differences: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    takeover: TakeoverPlan | None = None

    @property
    def changed(self) -> bool:
        return self.action != "unchanged" or self.takeover is not None


@dataclass
class Plan:
    rows: list[Row]
    errors: list[str] = field(default_factory=list)
    other_writes: list[str] = field(default_factory=list)
    status_writes: list[StatusWrite] = field(default_factory=list)
    events: list[PlannedEvent] = field(default_factory=list)

    def count(self, action: str) -> int:
        return sum(1 for r in self.rows if r.action == action)

    @property
    def changed(self) -> bool:
        return (
            any(r.changed for r in self.rows) or bool(self.other_writes) or bool(self.status_writes)
        )

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 1
        return 2 if self.changed else 0


def build(run: PlanRun) -> Plan:
    rows = [input_row(i.entry) for i in run.inputs]
    rows += object_rows(run.applier.records, policy=run.programs.takeover_policy)
    return Plan(
        rows,
        list(run.errors),
        list(run.applier.records.other_writes),
        list(run.status_writes),
        list(run.events),
    )


def status_diff(write: StatusWrite) -> list[str]:
    """Diff lines of the live status against the one the agent would write."""
    before = {"status": dict(write.before)} if write.before is not None else {}
    return diff.unified(before, {"status": dict(write.after)}, keep_status=True)


def input_row(entry: ChangeSetEntry) -> Row:
    """The input object: only its content counts (the plan's own manager entry does not)."""
    differences = [d for d in entry.differences if INPUT_MANAGER not in d]
    if entry.before is None:
        action = "created"
    elif differences:
        action = "configured"
    else:
        action = "unchanged"
    return Row(
        subject=entry.subject,
        action=action,
        managers=[],
        input=True,
        differences=differences if entry.before is not None else [],
        # A created input is the user's own file: repeating it adds nothing.
        diff=diff.unified(entry.before, entry.object) if action == "configured" else [],
    )


def object_rows(records: Records, *, policy: TakeoverPolicy) -> list[Row]:
    rows = []
    for subject in records.order:
        applies = [a for a in records.applies if a.subject == subject]
        deleted = next((d for d in records.deletes if d.subject == subject), None)
        if deleted is not None and not applies:
            rows.append(Row(subject, "would-delete", [], diff=diff.unified(deleted.live, None)))
            continue
        refused = [r for r in records.refused if r.subject == subject]
        if refused and not applies:
            conflicts = _unique(c for r in refused for c in r.conflicts)
            managers = list(dict.fromkeys(r.manager for r in refused))
            rows.append(Row(subject, "conflict", managers, conflicts=conflicts))
            continue
        rows.append(_apply_row(subject, records, policy=policy))
    return rows


def _apply_row(subject: str, records: Records, *, policy: TakeoverPolicy) -> Row:
    applies = [a for a in records.applies if a.subject == subject]
    base = records.real.get(subject)
    after = records.composed.get(subject)
    managers = list(dict.fromkeys(a.manager for a in applies))
    takeover = None
    if base is not None:
        content = next((m for m in managers if m != OWNERSHIP), OWNERSHIP)
        targets = targets_for(str(base.get("kind")), content, policy=policy)
        takeover = plan_takeover(base, **targets)
    found = [c for a in applies for c in a.entry.conflicts]
    found += [c for r in records.refused if r.subject == subject for c in r.conflicts]
    conflicts = _unique(
        c for c in found if takeover is None or c.path not in takeover.taken_from(c.manager)
    )
    differences = list(dict.fromkeys(d for a in applies for d in a.entry.differences))
    if base is None:
        action = "created"
    elif conflicts:
        action = "conflict"
    elif any(a.entry.changed for a in applies):
        action = "configured"
    else:
        action = "unchanged"
    status_only = all(a.subresource == "status" for a in applies)
    return Row(
        subject=subject,
        action=action,
        managers=managers,
        differences=differences if base is not None else [],
        diff=diff.unified(base, after, keep_status=status_only) if action != "unchanged" else [],
        conflicts=conflicts,
        takeover=takeover,
    )


def _unique(conflicts: Any) -> list[Conflict]:
    return list(dict.fromkeys(conflicts))


# -- output --------------------------------------------------------------------------------


def summary(plan: Plan) -> dict[str, int]:
    return {
        "created": plan.count("created"),
        "configured": plan.count("configured"),
        "unchanged": plan.count("unchanged"),
        "conflict": plan.count("conflict"),
        "wouldDelete": plan.count("would-delete"),
        "takeover": sum(1 for r in plan.rows if r.takeover is not None),
    }


def to_json(plan: Plan) -> str:
    doc = {
        "schema": SCHEMA_VERSION,
        "changes": plan.changed,
        "exitCode": plan.exit_code,
        "summary": summary(plan),
        "errors": plan.errors,
        "objects": [_row_json(r) for r in plan.rows],
        "otherWrites": plan.other_writes,
        "statusWrites": [
            {"subject": w.subject, "manager": w.manager, "diff": status_diff(w)}
            for w in plan.status_writes
        ],
        "events": [
            {"subject": e.subject, "type": e.type, "reason": e.reason, "message": e.message}
            for e in plan.events
        ],
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def _row_json(row: Row) -> dict[str, Any]:
    kind, _, rest = row.subject.partition("/")
    namespace, _, name = rest.rpartition("/")
    return {
        "subject": row.subject,
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "action": row.action,
        "input": row.input,
        "managers": row.managers,
        "differences": row.differences,
        "diff": row.diff,
        "conflicts": [
            {
                "path": c.path,
                "manager": c.manager,
                "operation": c.operation,
                "apiVersion": c.api_version,
            }
            for c in row.conflicts
        ],
        "takeover": _takeover_json(row.takeover),
    }


def _takeover_json(plan: TakeoverPlan | None) -> list[dict[str, Any]] | None:
    if plan is None:
        return None
    return [
        {
            "from": m.source,
            "operation": m.operation,
            "subresource": m.subresource,
            "to": m.target,
            "fields": m.fields,
            "paths": list(m.paths),
        }
        for m in plan.moves
    ]


def to_text(plan: Plan, *, show_diff: bool = True) -> str:
    lines: list[str] = []
    width = max((len(r.subject) for r in plan.rows), default=0)
    for row in plan.rows:
        lines += _row_text(row, width=width, show_diff=show_diff)
    for write in plan.other_writes:
        lines.append(f"also (dry run): {write}")
    for status_write in plan.status_writes:
        lines.append(f"status (dry run): {status_write.subject}  {status_write.manager}")
        if show_diff:
            lines += [f"    {line}" for line in status_diff(status_write)]
    for event in plan.events:
        lines.append(f"event: {event.type} {event.reason} on {event.subject}: {event.message}")
    for error in plan.errors:
        lines.append(f"error: {error}")
    lines.append(_summary_line(plan))
    return "\n".join(lines) + "\n"


def _row_text(row: Row, *, width: int, show_diff: bool) -> list[str]:
    who = "input (apply it with kubectl or GitOps)" if row.input else ", ".join(row.managers)
    out = [f"{row.subject:<{width}}  {row.action:<12}  {who}".rstrip()]
    if row.takeover is not None:
        out += [f"  takeover (before any apply): {m.describe()}" for m in row.takeover.moves]
    out += [f"  conflict: {c.describe()}" for c in row.conflicts]
    if show_diff:
        out += [f"    {line}" for line in row.diff]
    return out


def _summary_line(plan: Plan) -> str:
    counts = summary(plan)
    parts = [
        f"{counts['created']} to create",
        f"{counts['configured']} to configure",
        f"{counts['conflict']} in conflict",
        f"{counts['wouldDelete']} to delete",
        f"{counts['unchanged']} unchanged",
    ]
    if counts["takeover"]:
        parts.append(f"{counts['takeover']} to take over")
    verdict = "errors" if plan.errors else ("changes" if plan.changed else "no changes")
    return f"Plan: {', '.join(parts)} ({verdict})."


def rows_by_action(plan: Plan) -> Mapping[str, Sequence[str]]:
    out: dict[str, list[str]] = {a: [] for a in ACTIONS}
    for row in plan.rows:
        out[row.action].append(row.subject)
    return out
