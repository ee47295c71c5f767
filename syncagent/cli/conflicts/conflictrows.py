"""``conflicts``: every field a graph's applies would take from another manager, and what to do.

The rows come from the non-forced dry runs a plan makes (each content apply is dry-run without
force first, docs/design.md §9). Remedies:

- ``take-over``: the field was written by the upstream Dynamo operator, our predecessor, and a
  takeover adopts it (``programs/upstream_takeover.py``, docs/ownership.md): the agent merges it into
  ours before applying; nothing to do.
- ``hand-over``: ``replicas`` written by an autoscaler (an Update through ``/scale``): a
  two-step hand-over, so that no value is reset on the way.
- ``yield``: the apply is not forced (a co-owner's own reference item), so it fails; the field
  must be left out, or its other writer must stop.
- ``force``: the program is authoritative for what it renders and the agent forces the field
  (a hand edit with kubectl is put back); to keep the other writer's value instead, yield it
  (leave it out of the desired object). A writer that keeps taking it back is named in a
  ``FieldFight`` event and left alone for a while; those fights are listed too (read from the
  Events: the agent's memory is not visible here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from fieldmanagers import is_ours
from syncagent.cli.conflicts import fightevents
from syncagent.cli.conflicts.fieldpaths import show, value_at
from syncagent.inspect.planapplier import Records
from syncagent.kube.objects import Body
from syncagent.ssa import Conflict
from syncagent.ssa.managedfields import decode
from syncagent.ssa.takeover import TakeoverPolicy


@dataclass(frozen=True, slots=True)
class Remedy:
    kind: str  # take-over | hand-over | force | yield | fix-contract
    text: str


@dataclass(frozen=True, slots=True)
class ConflictRow:
    subject: str
    path: str
    manager: str
    operation: str
    our_manager: str
    ours: str
    live: str
    remedy: Remedy


def remedy_for(
    conflict: Conflict,
    *,
    operation: str,
    our_manager: str,
    ours: str,
    live: str,
    taken: bool = False,
    forced: bool = True,
) -> Remedy:
    """``taken``: the takeover policy adopts this field of its owner before the apply."""
    if taken:
        return Remedy(
            "take-over",
            f"{conflict.manager} ({operation}) wrote it as the upstream Dynamo operator; it is "
            f"taken over before the agent applies: it moves to {our_manager} in one guarded "
            "update; nothing to do",
        )
    if is_ours(conflict.manager):
        return Remedy(
            "fix-contract",
            f"two syncagent managers claim {conflict.path} ({conflict.manager} and "
            f"{our_manager}); the declarations in fieldmanagers/ must not overlap",
        )
    if conflict.path.endswith(".replicas"):
        return Remedy(
            "hand-over",
            f"two-step hand-over to {conflict.manager} (an autoscaler writing through /scale): "
            f"1) apply once with replicas equal to the live value {live} so both managers "
            "share the field, 2) then leave replicas out of the desired object; the "
            "autoscaler owns it alone and the value is never reset",
        )
    if not forced:
        return Remedy(
            "yield",
            f"this apply is not forced, so the agent's reconcile fails here: yield the field "
            f"(leave {conflict.path} out of the desired object), or have {conflict.manager} "
            f"stop writing it (its {live} vs our {ours})",
        )
    return Remedy(
        "force",
        f"the agent forces it (the program is authoritative for what it renders): "
        f"{conflict.manager}'s {live} becomes {ours}; to keep {conflict.manager}'s value "
        f"instead, yield the field: leave {conflict.path} out of the desired object",
    )


def rows(records: Records, *, policy: TakeoverPolicy) -> list[ConflictRow]:
    out: list[ConflictRow] = []
    found = [(a.subject, a.manager, a.desired, a.entry.conflicts, a.force) for a in records.applies]
    found += [(r.subject, r.manager, r.desired, r.conflicts, False) for r in records.refused]
    for subject, manager, desired, conflicts, forced in found:
        live = records.real.get(subject) or {}
        for conflict in conflicts:
            out.append(_row(subject, manager, desired, live, conflict, policy, forced=forced))
    return list(dict.fromkeys(out))


def _row(
    subject: str,
    manager: str,
    desired: Mapping[str, Any],
    live: Mapping[str, Any],
    conflict: Conflict,
    policy: TakeoverPolicy,
    *,
    forced: bool,
) -> ConflictRow:
    ours = show(*value_at(desired, conflict.path))
    theirs = show(*value_at(live, conflict.path))
    operation = operation_of(live, conflict)
    return ConflictRow(
        subject=subject,
        path=conflict.path,
        manager=conflict.manager,
        operation=operation,
        our_manager=manager,
        ours=ours,
        live=theirs,
        remedy=remedy_for(
            conflict,
            operation=operation,
            our_manager=manager,
            ours=ours,
            live=theirs,
            taken=taken_by(policy, live, conflict),
            forced=forced,
        ),
    )


def taken_by(policy: TakeoverPolicy, live: Mapping[str, Any], conflict: Conflict) -> bool:
    """Whether ``policy`` takes the conflicting field from its owner's entries."""
    raw = Body(live).meta.managed_fields
    return any(
        e.get("manager") == conflict.manager and conflict.path in policy.taken_paths(e, live=live)
        for e in raw
    )


def operation_of(live: Mapping[str, Any], conflict: Conflict) -> str:
    """The owner's operation (and subresource) as its managedFields entry records it.

    A 409 names the API version only for Update managers, and not for writes through a
    subresource, so the entry is the better witness; the 409's guess is the fallback.
    """
    for entry in decode(live):
        if entry.manager == conflict.manager and conflict.path in entry.paths():
            sub = f"/{entry.subresource}" if entry.subresource else ""
            return entry.operation + sub
    return conflict.operation


def to_text(
    found: list[ConflictRow], *, graph: str, fights: Sequence[fightevents.FightRow] = ()
) -> str:
    section = fightevents.to_text(list(fights))
    tail = "\n" + "\n".join(section) + "\n" if section else ""
    return _conflicts_text(found, graph=graph) + tail


def _conflicts_text(found: list[ConflictRow], *, graph: str) -> str:
    if not found:
        return f"{graph}: no conflicts: every apply succeeds without force\n"
    head = ("OBJECT", "PATH", "OWNER", "OPERATION", "OURS", "LIVE", "REMEDY")
    cells = [
        (r.subject, r.path, r.manager, r.operation, r.ours, r.live, r.remedy.kind) for r in found
    ]
    widths = [max(len(head[i]), *(len(c[i]) for c in cells)) for i in range(len(head))]
    lines = ["  ".join(f"{v:<{widths[i]}}" for i, v in enumerate(head)).rstrip()]
    lines += ["  ".join(f"{v:<{widths[i]}}" for i, v in enumerate(c)).rstrip() for c in cells]
    lines.append("")
    for n, row in enumerate(found, 1):
        lines.append(f"{n}. {row.subject} {row.path}: {row.remedy.text}")
    return "\n".join(lines) + "\n"


def to_json(
    found: list[ConflictRow], *, graph: str, fights: Sequence[fightevents.FightRow] = ()
) -> str:
    doc = {
        "graph": graph,
        "conflicts": [
            {
                "object": r.subject,
                "path": r.path,
                "manager": r.manager,
                "operation": r.operation,
                "ourManager": r.our_manager,
                "ours": r.ours,
                "live": r.live,
                "remedy": r.remedy.kind,
                "remedyText": r.remedy.text,
            }
            for r in found
        ],
        "fights": fightevents.to_json(list(fights)),
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
