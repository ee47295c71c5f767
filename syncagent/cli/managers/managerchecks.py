"""``managers``: the field managers on a graph's objects, checked against ``fieldmanagers/``.

Per object: every managedFields entry, the bytes managedFields take, and findings:
- ``outside-contract``: a ``syncagent/*`` manager owns a path (or writes a kind, or uses an
  operation/subresource) its declaration does not name;
- ``unknown``: a ``syncagent/*`` manager no module declares (a renamed or removed manager);
- ``stale``: an Update entry holding fields a takeover adopts (what the upstream Dynamo operator
  wrote, docs/ownership.md), or a per-owner manager whose owner no longer has a reference on
  the object;
- ``missing``: an object controlled through our references whose controller reference no
  syncagent manager holds (``syncagent/ownership``, or since the one-write create the object's
  content manager: docs/write-protocol.md §3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

import fieldmanagers
from fieldmanagers import ownership
from fieldmanagers.contract import FieldManager
from fieldmanagers.owner import PREFIX as OWNER_PREFIX
from syncagent.kube.objects import Body
from syncagent.ssa.desired import ref_of
from syncagent.ssa.managedfields import ManagerEntry, decode
from syncagent.ssa.takeover import TakeoverPolicy

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # outside-contract | unknown | stale | missing
    manager: str
    text: str


@dataclass
class ObjectReport:
    subject: str
    bytes: int
    entries: list[ManagerEntry]
    findings: list[Finding] = field(default_factory=list)


def check_graph(
    graph: Mapping[str, Any],
    live: Iterable[Obj],
    *,
    declared: Sequence[FieldManager],
    policy: TakeoverPolicy,
) -> list[ObjectReport]:
    """``declared``: every manager the agent writes with (``Registry.field_managers``);
    ``policy``: what a takeover moves (``Registry.takeover_policy``)."""
    objects = graph_objects(graph, live)
    return [
        check(objects[0], declared=declared, policy=policy, user_object=True),
        *(check(o, declared=declared, policy=policy) for o in objects[1:]),
    ]


def graph_objects(graph: Mapping[str, Any], live: Iterable[Obj]) -> list[Obj]:
    """The graph and everything that references it, directly or through its children."""
    objects = list(live)
    uids = {Body(graph).meta.uid}
    chosen: dict[str, Obj] = {}
    changed = True
    while changed:
        changed = False
        for obj in objects:
            view = Body(obj)
            if view.meta.uid in uids:
                continue
            if {ref.uid for ref, _ in view.owners()} & uids:
                uids.add(view.meta.uid)
                chosen[ref_of(obj).subject] = obj
                changed = True
    return [dict(graph), *chosen.values()]


def check(
    obj: Mapping[str, Any],
    *,
    declared: Sequence[FieldManager],
    policy: TakeoverPolicy,
    user_object: bool = False,
) -> ObjectReport:
    """``user_object``: the graph itself, whose content its author writes (never taken over)."""
    raw = Body(obj).meta.managed_fields
    entries = decode(obj)
    report = ObjectReport(ref_of(obj).subject, len(orjson.dumps(raw)), entries)
    kind = str(obj.get("kind"))
    ref_uids = {ref.uid for ref, _ in Body(obj).owners()}
    controller = Body(obj).controller
    controller_uid = controller.uid if controller is not None else ""
    for raw_entry, entry in zip(raw, entries, strict=True):
        if fieldmanagers.is_ours(entry.manager):
            report.findings += _check_ours(
                entry,
                declared=declared,
                kind=kind,
                ref_uids=ref_uids,
                controller_uid=controller_uid,
            )
        elif not user_object and (taken := policy.taken_paths(raw_entry, live=obj)):
            report.findings.append(
                Finding(
                    "stale",
                    entry.manager,
                    f"{entry.manager} ({entry.operation}) owns {len(taken)} field(s) the "
                    "upstream operator wrote; taken over before the agent's next apply",
                )
            )
    holders = {
        e.manager
        for e in entries
        if fieldmanagers.is_ours(e.manager)
        and any(_controller_item(p, controller_uid) for p in e.paths())
    }
    names = {e.manager for e in entries}
    owner = fieldmanagers.by_name(ownership.MANAGER.name, declared=declared) or ownership.MANAGER
    if (
        _controlled_by_us(obj)
        and ownership.MANAGER.name not in names
        and not holders
        and kind in owner.kinds
    ):
        report.findings.append(
            Finding(
                "missing",
                ownership.MANAGER.name,
                "the controller reference is held by no syncagent manager; the next "
                "reconcile adopts it",
            )
        )
    return report


def _controlled_by_us(obj: Mapping[str, Any]) -> bool:
    controller = Body(obj).controller
    return controller is not None and controller.api_version.startswith("nvidia.com/")


def _controller_item(path: str, controller_uid: str) -> bool:
    """Whether ``path`` is the controller's ownerReferences item (or a field of it)."""
    return bool(controller_uid) and (
        path.startswith(".metadata.ownerReferences[") and controller_uid in path
    )


def _check_ours(
    entry: ManagerEntry,
    *,
    declared: Sequence[FieldManager],
    kind: str,
    ref_uids: set[str],
    controller_uid: str = "",
) -> list[Finding]:
    decl = fieldmanagers.by_name(entry.manager, declared=declared)
    if decl is None:
        return [
            Finding(
                "unknown",
                entry.manager,
                f"{entry.manager} is not declared in fieldmanagers/ (renamed or removed?); its "
                "fields stay until another apply takes them",
            )
        ]
    if entry.manager.startswith(OWNER_PREFIX) and decl.name[len(OWNER_PREFIX) :] not in ref_uids:
        return [
            Finding(
                "stale",
                entry.manager,
                f"{entry.manager}: its owner has no reference on the object any more",
            )
        ]
    out: list[Finding] = []
    if kind not in decl.kinds:
        out.append(
            Finding("outside-contract", entry.manager, f"{entry.manager} does not write {kind}")
        )
    if (entry.operation, entry.subresource) != (decl.operation, decl.subresource):
        out.append(
            Finding(
                "outside-contract",
                entry.manager,
                f"{entry.manager} wrote with {_how(entry.operation, entry.subresource)}, "
                f"declared {_how(decl.operation, decl.subresource)}",
            )
        )
    if decl.exempt_from_checks:
        return out
    for path in entry.paths():
        # A content manager holds the controller item of an object it created (one-write
        # create, docs/write-protocol.md §3); any other reference item stays undeclared.
        if path and not decl.owns(path) and not _controller_item(path, controller_uid):
            out.append(
                Finding(
                    "outside-contract", entry.manager, f"{entry.manager} owns {path} (undeclared)"
                )
            )
    return out


def _how(operation: str, subresource: str) -> str:
    return operation + (f" on {subresource}" if subresource else "")


def to_text(reports: list[ObjectReport]) -> str:
    width = max((len(r.subject) for r in reports), default=6)
    lines = [f"{'OBJECT':<{width}}  {'BYTES':>6}  MANAGERS"]
    for r in reports:
        names = ", ".join(
            f"{e.manager} ({_how(e.operation, e.subresource).replace(' on ', '/')})"
            for e in r.entries
        )
        lines.append(f"{r.subject:<{width}}  {r.bytes:>6}  {names}")
        lines += [f"  {f.kind}: {f.text}" for f in r.findings]
    total = sum(r.bytes for r in reports)
    findings = sum(len(r.findings) for r in reports)
    lines.append(f"managedFields: {total} bytes on {len(reports)} object(s); {findings} finding(s)")
    return "\n".join(lines) + "\n"


def to_json(reports: list[ObjectReport]) -> str:
    doc = {
        "objects": [
            {
                "object": r.subject,
                "managedFieldsBytes": r.bytes,
                "managers": [
                    {
                        "manager": e.manager,
                        "operation": e.operation,
                        "subresource": e.subresource,
                        "fields": len(e.fields),
                    }
                    for e in r.entries
                ],
                "findings": [
                    {"kind": f.kind, "manager": f.manager, "text": f.text} for f in r.findings
                ],
            }
            for r in reports
        ],
        "totalBytes": sum(r.bytes for r in reports),
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
