"""Readiness of a DisaggregatedSet (docs/disaggregatedset.md §4). Pure: reads wire-form dicts.

The DS revision hash is opaque; target children are found through the template hash ``F`` the
program writes into role metadata, which the DS controller copies onto a child only at creation.
``status.roleStatuses`` counts only with generation evidence (v0.9.0/v0.10.0 never write it);
otherwise the target-revision children decide, and every other child must have drained to zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from syncagent.kube import being_deleted, controlled_by
from syncagent.kube.objects import Body, Meta
from syncagent.programs.disaggregatedset.render import (
    REVISION_LABEL,
    ROLE_LABEL,
    SLICE_LABEL,
    TEMPLATE_HASH,
)

Obj = Mapping[str, Any]
READY_MESSAGE = "All DisaggregatedSet child LeaderWorkerSets are ready"
MODIFIED_MESSAGE = "DisaggregatedSet spec was updated; waiting for controller status"
GATED_MESSAGE = "DisaggregatedSet roles are waiting for checkpoint readiness"


@dataclass(frozen=True, slots=True)
class SelectedRole:
    component: str
    role: str
    desired: int = 1  # replicas after checkpoint gating


@dataclass
class DsReadiness:
    ready: bool
    reason: str
    # role -> revision label of its target children (None while unknown)
    revisions: dict[str, str | None] = field(default_factory=dict)


def _meta(obj: Obj) -> Meta:
    return Body(obj).meta


def _int(value: Any) -> int:
    return int(value or 0)


def _labels(obj: Obj) -> Mapping[str, str]:
    return _meta(obj).labels


def child_slice(child: Obj) -> int:
    raw = _labels(child).get(SLICE_LABEL)
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0


def children_of(lws_objects: Sequence[Obj], ds_uid: str) -> list[Obj]:
    """LWS controlled by the DS (by UID; labels never establish ownership), not being deleted."""
    return [o for o in lws_objects if not being_deleted(o) and controlled_by(o, ds_uid)]


def slices_of(ds: Obj) -> int:
    value = Body(ds).spec.get("slices")
    return value if isinstance(value, int) and value >= 1 else 1


def _newest(children: Sequence[Obj]) -> Obj:
    return max(children, key=lambda c: (_meta(c).creation_timestamp, _meta(c).name))


def targets(children: Sequence[Obj], role: str, slice_index: int, f_hash: str) -> list[Obj]:
    """Children of (role, slice) with annotation ``F`` and the newest such child's revision."""
    candidates = [
        c
        for c in children
        if _labels(c).get(ROLE_LABEL) == role
        and child_slice(c) == slice_index
        and _meta(c).annotations.get(TEMPLATE_HASH) == f_hash
    ]
    if not candidates:
        return []
    revision = _labels(_newest(candidates)).get(REVISION_LABEL)
    return [c for c in candidates if _labels(c).get(REVISION_LABEL) == revision]


def _status_evidence(ds: Obj) -> list[int] | None:
    """Observed generations the DS status proves, or None without evidence (or roleStatuses)."""
    status = Body(ds).status
    if not status.get("roleStatuses"):
        return None
    seen = []
    if status.get("observedGeneration") is not None:
        seen.append(_int(status["observedGeneration"]))
    seen += [
        _int(c["observedGeneration"])
        for c in status.get("conditions") or ()
        if c.get("observedGeneration") is not None
    ]
    return seen or None


def _status_reasons(ds: Obj, roles: Sequence[SelectedRole], observed: list[int]) -> list[str]:
    generation = _meta(ds).generation
    behind = [o for o in observed if o < generation]
    if behind:
        return [
            f"DisaggregatedSet status has not observed generation {generation} "
            f"(observedGeneration={min(behind)})"
        ]
    entries = {s.get("name"): s for s in Body(ds).status.get("roleStatuses") or ()}
    reasons = []
    for sel in roles:
        d = sel.desired * slices_of(ds)
        entry = entries.get(sel.role)
        prefix = f'{sel.component} role "{sel.role}"'
        if entry is None:
            reasons.append(f"{prefix} has no status yet")
            continue
        r, u, y = (_int(entry.get(k)) for k in ("replicas", "updatedReplicas", "readyReplicas"))
        if d == 0:
            if r or u or y:
                reasons.append(f"{prefix} has not scaled to zero")
        elif not r == u == y == d:
            reasons.append(
                f"{prefix} replicas not ready (desired={d} replicas={r} updated={u} ready={y})"
            )
    return reasons


def _child_counts(child: Obj) -> tuple[int, int, int]:
    status = Body(child).status
    return (
        _int(status.get("replicas")),
        _int(status.get("updatedReplicas")),
        _int(status.get("readyReplicas")),
    )


def _spec_replicas(child: Obj) -> int:
    value = Body(child).spec.get("replicas")
    return 1 if value is None else int(value)


def _target_reasons(sel: SelectedRole, slice_index: int, found: Sequence[Obj]) -> list[str]:
    desired = sel.desired
    prefix = f'{sel.component} role "{sel.role}" slice {slice_index}'
    if len(found) != 1 and not (len(found) == 0 and desired == 0):
        return [f"{prefix} has {len(found)} target LeaderWorkerSets, expected 1"]
    reasons = []
    for child in found:
        meta = _meta(child)
        generation = meta.generation
        if _int(Body(child).status.get("observedGeneration")) < generation:
            reasons.append(
                f'child LeaderWorkerSet "{meta.name}" has not observed generation {generation}'
            )
        r, u, y = _child_counts(child)
        if not _spec_replicas(child) == r == u == y == desired:
            reasons.append(
                f"{prefix} replicas not ready (desired={desired} replicas={r} updated={u} "
                f"ready={y})"
            )
    return reasons


def _drained(child: Obj) -> bool:
    return _spec_replicas(child) == 0 and _child_counts(child) == (0, 0, 0)


def ds_readiness(
    ds: Obj | None,
    children: Sequence[Obj],
    *,
    roles: Sequence[SelectedRole],
    f_hash: str,
) -> DsReadiness:
    """§4.2: status evidence first (when present), then the children; reasons sorted."""
    if ds is None or being_deleted(ds):
        return DsReadiness(False, "not found")
    revisions = _revisions(children, roles, f_hash)
    observed = _status_evidence(ds)
    if observed is not None:
        reasons = _status_reasons(ds, roles, observed)
        if reasons:
            return DsReadiness(False, "; ".join(sorted(reasons)), revisions)
    reasons = []
    target_names: set[str] = set()
    for sel in roles:
        for slice_index in range(slices_of(ds)):
            found = targets(children, sel.role, slice_index, f_hash)
            target_names |= {_meta(c).name for c in found}
            reasons += _target_reasons(sel, slice_index, found)
    for child in children:
        name = _meta(child).name
        if name not in target_names and not _drained(child):
            role = _labels(child).get(ROLE_LABEL, "")
            reasons.append(
                f'stale role "{role}" child LeaderWorkerSet "{name}" has not scaled to zero'
            )
    if reasons:
        return DsReadiness(False, "; ".join(sorted(reasons)), revisions)
    return DsReadiness(True, READY_MESSAGE, revisions)


def _revisions(
    children: Sequence[Obj], roles: Sequence[SelectedRole], f_hash: str
) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for sel in roles:
        found = targets(children, sel.role, 0, f_hash)
        out[sel.role] = _labels(found[0]).get(REVISION_LABEL) if found else None
    return out


def component_status(
    sel: SelectedRole,
    children: Sequence[Obj],
    *,
    f_hash: str,
    runtime_namespace: str,
    slices: int,
) -> dict[str, Any]:
    """``status.components[<component>]`` of a selected component (§4.2)."""
    mine = [c for c in children if _labels(c).get(ROLE_LABEL) == sel.role]
    target_set = {
        _meta(c).name for s in range(slices) for c in targets(children, sel.role, s, f_hash)
    }
    return {
        "componentKind": "LeaderWorkerSet",
        "componentNames": sorted(_meta(c).name for c in mine),
        "runtimeNamespace": runtime_namespace,
        "replicas": sum(_child_counts(c)[0] for c in mine),
        "readyReplicas": sum(_child_counts(c)[2] for c in mine),
        "updatedReplicas": sum(_child_counts(c)[1] for c in mine if _meta(c).name in target_set),
    }
