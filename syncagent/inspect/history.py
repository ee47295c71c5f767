"""``syncagent blame --history``: each field's owners over time (pure).

The agent serves the transitions it saw (``controller/historyapi.py``); the live object's
managedFields say who owns each field now. Walking the transitions back from now gives the
owners before each one, so a field's timeline starts with its owners when the history begins
and has one step per transition that moved it: a field that flipped between two writers shows
each flip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from syncagent.ssa.history import Transition, from_doc
from syncagent.ssa.managedfields import decode, owners_by_path
from syncagent.ssa.paths import render

Owner = tuple[str, str, str]  # manager, operation, subresource


@dataclass(frozen=True, slots=True)
class Step:
    time: float
    owners: tuple[Owner, ...]
    before: str | None = None  # the value's JSON, when the agent renders the field
    after: str | None = None
    known: bool = False  # before/after were recorded


@dataclass(frozen=True, slots=True)
class FieldHistory:
    path: str
    steps: tuple[Step, ...]  # the first: the owners when the history begins


@dataclass(frozen=True, slots=True)
class Report:
    subject: str
    since: float
    begins: str  # "agent-start", "created" or "trimmed"
    fields: tuple[FieldHistory, ...]  # the fields that changed hands, by path
    unchanged: int  # fields whose owners stayed the same throughout


def _created(obj: Mapping[str, Any]) -> float:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return 0.0
    return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()


def _begins(obj: Mapping[str, Any], served: Mapping[str, Any]) -> tuple[float, str]:
    start = float(served.get("start") or 0.0)
    complete = float(served.get("completeSince") or start)
    created = _created(obj)
    # creationTimestamp has whole seconds: created in the second the history began counts.
    if created + 1.0 > complete:
        return max(created, complete), "created"
    return complete, "trimmed" if complete > start else "agent-start"


def report(subject: str, obj: Mapping[str, Any], served: Mapping[str, Any]) -> Report:
    """``obj``: the live object; ``served``: the agent's OwnershipHistory for it."""
    uid = str((obj.get("metadata") or {}).get("uid") or "")
    served_uid = (served.get("object") or {}).get("uid")
    same = not served_uid or served_uid == uid
    transitions = [from_doc(t) for t in served.get("transitions") or ()] if same else []
    since, begins = _begins(obj, served)
    transitions = sorted((t for t in transitions if t.time >= since), key=lambda t: t.time)
    now = {
        render(p): {(o.manager, o.operation, o.subresource) for o in owners}
        for p, owners in owners_by_path(decode(obj)).items()
    }
    timelines = _timelines(now, transitions)
    fields = tuple(
        FieldHistory(path, (Step(since, _sorted(start)), *steps))
        for path, (start, steps) in sorted(timelines.items())
    )
    unchanged = len(now.keys() - timelines.keys())
    return Report(subject, since, begins, fields, unchanged)


def _timelines(
    now: Mapping[str, set[Owner]], transitions: Sequence[Transition]
) -> dict[str, tuple[set[Owner], list[Step]]]:
    """Per moved path: its owners before the first transition, and a step per transition."""
    state = {path: set(owners) for path, owners in now.items()}
    steps: dict[str, list[Step]] = {}
    for t in reversed(transitions):
        values = {v.path: v for v in t.values}
        touched = {p for c in t.changes for p in (*c.gained, *c.lost)}
        for path in touched:
            value, owners = values.get(path), _sorted(state.get(path, set()))
            step = Step(t.time, owners, value.before, value.after, True) if value else None
            steps.setdefault(path, []).insert(0, step or Step(t.time, owners))
        for c in t.changes:
            owner = (c.manager, c.operation, c.subresource)
            for path in c.gained:
                state.setdefault(path, set()).discard(owner)
            for path in c.lost:
                state.setdefault(path, set()).add(owner)
    return {path: (state.get(path, set()), found) for path, found in steps.items()}


def _sorted(owners: set[Owner]) -> tuple[Owner, ...]:
    return tuple(sorted(owners))


# -- output --------------------------------------------------------------------------------


def stamp(seconds: float) -> str:
    """UTC with milliseconds: two flips within a second stay apart."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _owner_text(owners: tuple[Owner, ...]) -> str:
    if not owners:
        return "(no owner)"
    return ", ".join(f"{m} ({op}{'/' + sub if sub else ''})" for m, op, sub in owners)


BEGINS = {
    "agent-start": "when the agent started; it knows no earlier change",
    "created": "when the object was created",
    "trimmed": "older transitions were dropped to keep the agent's history within its bound",
}


def to_text(found: Report) -> str:
    out = [
        f"{found.subject}: ownership history since {stamp(found.since)} ({BEGINS[found.begins]})"
    ]
    for field in found.fields:
        out.append(field.path)
        rows = [(stamp(s.time), _owner_text(s.owners), _value_text(s)) for s in field.steps]
        width = max(len(r[1]) for r in rows)
        out += [f"  {t}  {o:<{width}}  {v}".rstrip() for t, o, v in rows]
    if not found.fields:
        out.append("No field changed hands.")
    if found.unchanged:
        out.append(
            f"{found.unchanged} other fields kept their owners throughout (syncagent blame "
            "shows them)."
        )
    return "\n".join(out) + "\n"


def _value_text(step: Step) -> str:
    if not step.known:
        return ""
    return f"{step.before or '(absent)'} -> {step.after or '(absent)'}"


def to_json(found: Report) -> str:
    doc = {
        "object": found.subject,
        "since": stamp(found.since),
        "begins": found.begins,
        "unchanged": found.unchanged,
        "fields": [
            {
                "path": f.path,
                "steps": [
                    {
                        "time": stamp(s.time),
                        "owners": [
                            {"manager": m, "operation": op, "subresource": sub}
                            for m, op, sub in s.owners
                        ],
                        **({"before": s.before, "after": s.after} if s.known else {}),
                    }
                    for s in f.steps
                ],
            }
            for f in found.fields
        ],
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
