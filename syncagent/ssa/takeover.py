"""Take over fields that earlier writers set through Update operations.

Objects written by a predecessor controller carry its Update entries in ``managedFields``.
Server-side apply never removes a field some other manager still owns, so once we apply such an
object, fields the predecessor set and we no longer set would linger forever. Taking over moves
the predecessor's fields into our entries, in ONE write guarded by the object's resourceVersion
(the technique of client-go's ``csaupgrade``, used by ``kubectl apply --server-side`` to
migrate client-side apply):

- ``f:metadata.f:ownerReferences`` items -> the ownership manager;
- ``f:status`` (on the status subresource or in a main-resource entry) -> the status manager
  (dropped, i.e. left unowned, when the caller names none);
- everything else -> the content manager.

What moves is exactly what a :class:`TakeoverPolicy` selects: which managers, on which kinds
and subresource, and which of their fields (a subtree, the members of a map or set whose key
starts with a prefix, or the list items whose live value matches). Everything else an entry
owns stays with it, so the fields other writers added beside ours keep their owner and survive
our applies. Only Update entries are ever taken: an Apply entry is a deliberate co-owner. The
write changes no content, so the server records no new entry for it. This module knows nothing
about which writers are "old" or what they wrote: the caller passes the policy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from syncagent.kube.objects import Body
from syncagent.ssa import fieldsets
from syncagent.ssa.applier import Applier
from syncagent.ssa.desired import ref_of
from syncagent.ssa.fieldsets import FieldSelector, FieldsV1
from syncagent.ssa.managedfields import decode_fields, managed_fields_patch
from syncagent.ssa.paths import render

_OWNER_REFS = "f:ownerReferences"
_METADATA = "f:metadata"
_STATUS = "f:status"


@dataclass(frozen=True, slots=True)
class TakeoverRule:
    """The ``fields`` that Update entries of ``managers`` own on ``subresource`` ("" = the main
    resource) of objects of ``kinds`` (None = every kind) are taken over."""

    managers: frozenset[str]
    fields: tuple[FieldSelector, ...]
    kinds: frozenset[str] | None = None
    subresource: str = ""

    def applies_to(self, entry: Mapping[str, Any], *, kind: str) -> bool:
        return (
            entry.get("operation") == "Update"
            and str(entry.get("manager") or "") in self.managers
            and (entry.get("subresource") or "") == self.subresource
            and (self.kinds is None or kind in self.kinds)
        )


@dataclass(frozen=True, slots=True)
class TakeoverPolicy:
    """Which parts of which Update entries a takeover moves into our managers."""

    rules: tuple[TakeoverRule, ...] = ()

    @property
    def managers(self) -> frozenset[str]:
        return frozenset(m for rule in self.rules for m in rule.managers)

    def taken(self, entry: Mapping[str, Any], *, live: Mapping[str, Any]) -> FieldsV1:
        """The part of ``entry`` (a raw managedFields entry of ``live``) the policy takes."""
        kind = str(live.get("kind") or "")
        fields = entry.get("fieldsV1") or {}
        out: FieldsV1 = {}
        for rule in self.rules:
            if rule.applies_to(entry, kind=kind):
                for selector in rule.fields:
                    out = fieldsets.merge(out, selector.select(fields, live=live))
        return out

    def taken_paths(self, entry: Mapping[str, Any], *, live: Mapping[str, Any]) -> set[str]:
        """The readable paths (``.metadata.labels.x``) of :meth:`taken`."""
        return {render(p) for p in decode_fields(self.taken(entry, live=live))}


NOTHING = TakeoverPolicy()


@dataclass(frozen=True, slots=True)
class Move:
    """One taken-over part of an entry: from whom, into which of our managers, which paths."""

    source: str
    operation: str
    subresource: str
    target: str
    fields: int
    paths: tuple[str, ...] = ()

    def describe(self) -> str:
        where = f" on {self.subresource}" if self.subresource else ""
        return f"{self.source} ({self.operation}{where}): {self.fields} field(s) -> {self.target}"


@dataclass(frozen=True, slots=True)
class TakeoverPlan:
    """The managedFields list after the takeover, and what moved where."""

    subject: str
    resource_version: str
    managed_fields: list[dict[str, Any]]
    moves: tuple[Move, ...] = field(default=())

    def describe(self) -> str:
        return "; ".join(m.describe() for m in self.moves)

    def taken_from(self, manager: str) -> set[str]:
        """Every path taken from ``manager``."""
        return {p for m in self.moves if m.source == manager for p in m.paths}


@dataclass(frozen=True, slots=True)
class Targets:
    content: str
    ownership: str
    status: str | None = None


def plan_takeover(
    live: Mapping[str, Any],
    *,
    content_manager: str,
    ownership_manager: str,
    status_manager: str | None = None,
    policy: TakeoverPolicy = NOTHING,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> TakeoverPlan | None:
    """The takeover of ``live`` (pure), or None when the policy takes nothing."""
    raw = Body(live).meta.managed_fields
    taken = [policy.taken(e, live=live) for e in raw]
    if not any(taken):
        return None
    targets = Targets(content_manager, ownership_manager, status_manager)
    kept = [_rest(e, t) for e, t in zip(raw, taken, strict=True)]
    kept = [e for e in kept if e is not None]
    stamp = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    api_version = str(live.get("apiVersion") or "")
    moves: list[Move] = []
    for entry, fields in zip(raw, taken, strict=True):
        for target, subresource, part in _split(entry, fields, targets):
            moves.append(
                Move(
                    source=str(entry.get("manager")),
                    operation=str(entry.get("operation")),
                    subresource=str(entry.get("subresource") or ""),
                    target=target,
                    fields=fieldsets.count(part),
                    paths=tuple(sorted(render(p) for p in decode_fields(part))),
                )
            )
            _merge_into(kept, target, subresource, part, api_version=api_version, time=stamp)
    return TakeoverPlan(
        subject=ref_of(live).subject,
        resource_version=Body(live).meta.resource_version,
        managed_fields=kept,
        moves=tuple(moves),
    )


def _rest(entry: Mapping[str, Any], taken: FieldsV1) -> dict[str, Any] | None:
    """``entry`` without the taken fields (None when nothing is left)."""
    if not taken:
        return copy.deepcopy(dict(entry))
    rest = fieldsets.subtract(entry.get("fieldsV1") or {}, taken)
    if not rest:
        return None
    return {**copy.deepcopy(dict(entry)), "fieldsV1": rest}


def _split(
    entry: Mapping[str, Any], taken: FieldsV1, targets: Targets
) -> list[tuple[str, str, FieldsV1]]:
    """(target manager, subresource of its entry, fieldsV1) for each part of ``taken``."""
    if not taken:
        return []
    fields = copy.deepcopy(taken)
    if (entry.get("subresource") or "") == "status":
        return [(targets.status, "status", fields)] if targets.status else []
    out: list[tuple[str, str, FieldsV1]] = []
    meta = fields.get(_METADATA)
    if isinstance(meta, dict) and _OWNER_REFS in meta:
        out.append((targets.ownership, "", {_METADATA: {_OWNER_REFS: meta.pop(_OWNER_REFS)}}))
        if not meta or set(meta) == {"."}:
            fields.pop(_METADATA)
    status = fields.pop(_STATUS, None)
    if status is not None and targets.status:
        out.append((targets.status, "status", {_STATUS: status}))
    if fields:
        out.append((targets.content, "", fields))
    return out


def _merge_into(
    entries: list[dict[str, Any]],
    manager: str,
    subresource: str,
    fields: FieldsV1,
    *,
    api_version: str,
    time: str,
) -> None:
    for entry in entries:
        same = (entry.get("manager"), entry.get("operation"), entry.get("subresource") or "")
        if same == (manager, "Apply", subresource):
            entry["fieldsV1"] = fieldsets.merge(entry.get("fieldsV1") or {}, fields)
            return
    new: dict[str, Any] = {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        new["subresource"] = subresource
    entries.append(new)


def patch_body(plan: TakeoverPlan) -> list[dict[str, Any]]:
    """The takeover's one write: a JSON patch of managedFields guarded by the resourceVersion."""
    return managed_fields_patch(plan.managed_fields, plan.resource_version)


@dataclass(frozen=True, slots=True)
class TakeoverResult:
    """The object after the takeover (a plan applier's: the dry-run result); None plan = no-op."""

    object: dict[str, Any]
    plan: TakeoverPlan | None

    @property
    def changed(self) -> bool:
        return self.plan is not None


async def take_over(
    engine: Applier,
    live: Mapping[str, Any],
    *,
    content_manager: str,
    ownership_manager: str,
    status_manager: str | None = None,
    policy: TakeoverPolicy = NOTHING,
) -> TakeoverResult:
    """Move what ``policy`` selects of Update entries into our managers, in one guarded write
    (:meth:`Engine.replace_managed_fields`; a plan applier makes it a dry run).

    Raises ``PreconditionError`` when the object changed since ``live`` was read (re-read it and
    call again).
    """
    plan = plan_takeover(
        live,
        content_manager=content_manager,
        ownership_manager=ownership_manager,
        status_manager=status_manager,
        policy=policy,
    )
    if plan is None:
        return TakeoverResult(dict(live), None)
    result = await engine.replace_managed_fields(live, plan.managed_fields)
    return TakeoverResult(result, plan)


def needs_takeover(live: Mapping[str, Any] | None, *, policy: TakeoverPolicy = NOTHING) -> bool:
    """Whether ``policy`` would take anything of ``live`` (no request, for callers' guards)."""
    if not live:
        return False
    return any(policy.taken(e, live=live) for e in Body(live).meta.managed_fields)
