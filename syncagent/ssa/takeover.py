"""Take over fields that earlier writers set through Update operations.

Objects written by another controller or by ``kubectl`` (``kubectl create/edit/replace``,
client-side ``apply``) carry Update entries in ``managedFields``. Server-side apply never removes
a field some other manager still owns, so once we apply such an object, fields we stop writing
would linger forever. Taking over moves those entries into ours, in ONE write guarded by the
object's resourceVersion (the technique of client-go's ``csaupgrade``, used by ``kubectl apply
--server-side`` to migrate client-side apply):

- ``f:metadata.f:ownerReferences`` -> the ownership manager;
- entries on the ``status`` subresource, and ``f:status`` of main-resource entries -> the status
  manager (dropped, i.e. left unowned, when the caller names none);
- everything else -> the content manager.

The write changes no content, so the server records no new entry for it. This module knows
nothing about which writers are "old": the caller passes a :class:`TakeoverPolicy`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from syncagent.ssa.desired import ObjectRef, ref_of
from syncagent.ssa.errors import SsaError

JSON_PATCH = "application/json-patch+json"
_OWNER_REFS = "f:ownerReferences"
_METADATA = "f:metadata"
_STATUS = "f:status"
# Subresources whose entries describe the object's content, so merging them into an Apply entry of
# the main resource would claim fields the main resource cannot write.
_SKIPPED_SUBRESOURCES = frozenset({"scale"})


@dataclass(frozen=True, slots=True)
class TakeoverPolicy:
    """Which Update entries are taken over: exact manager names, or name prefixes.

    ``kubectl`` covers ``kubectl``, ``kubectl-client-side-apply``, ``kubectl-edit``,
    ``kubectl-create``, ``kubectl-replace``, ``kubectl-patch``, ``kubectl-label``... Only
    Update operations are taken: a server-side ``kubectl apply`` (operation Apply) is a
    deliberate co-owner and stays.
    """

    managers: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ("kubectl",)

    def is_old(self, entry: Mapping[str, Any]) -> bool:
        if entry.get("operation") != "Update":
            return False
        if (entry.get("subresource") or "") in _SKIPPED_SUBRESOURCES:
            return False
        name = str(entry.get("manager") or "")
        return name in self.managers or any(name.startswith(p) for p in self.prefixes)

    def with_managers(self, *names: str) -> TakeoverPolicy:
        return TakeoverPolicy(self.managers | frozenset(names), self.prefixes)


KUBECTL = TakeoverPolicy()


@dataclass(frozen=True, slots=True)
class Move:
    """One taken-over entry: from whom, into which of our managers, how many fields."""

    source: str
    operation: str
    subresource: str
    target: str
    fields: int

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
    policy: TakeoverPolicy = KUBECTL,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> TakeoverPlan | None:
    """The takeover of ``live`` (pure), or None when no entry matches ``policy``."""
    raw = list((live.get("metadata") or {}).get("managedFields") or [])
    old = [e for e in raw if policy.is_old(e)]
    if not old:
        return None
    targets = Targets(content_manager, ownership_manager, status_manager)
    kept = [copy.deepcopy(e) for e in raw if not policy.is_old(e)]
    stamp = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    api_version = str(live.get("apiVersion") or "")
    moves: list[Move] = []
    for entry in old:
        for target, subresource, fields in _split(entry, targets):
            moves.append(
                Move(
                    source=str(entry.get("manager")),
                    operation=str(entry.get("operation")),
                    subresource=str(entry.get("subresource") or ""),
                    target=target,
                    fields=count_fields(fields),
                )
            )
            _merge_into(kept, target, subresource, fields, api_version=api_version, time=stamp)
    meta = live.get("metadata") or {}
    return TakeoverPlan(
        subject=ref_of(live).subject,
        resource_version=str(meta.get("resourceVersion") or ""),
        managed_fields=kept,
        moves=tuple(moves),
    )


def _split(entry: Mapping[str, Any], targets: Targets) -> list[tuple[str, str, dict[str, Any]]]:
    """(target manager, subresource of its entry, fieldsV1) for each part of ``entry``."""
    fields = copy.deepcopy(dict(entry.get("fieldsV1") or {}))
    if (entry.get("subresource") or "") == "status":
        return [(targets.status, "status", fields)] if targets.status and fields else []
    out: list[tuple[str, str, dict[str, Any]]] = []
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
    fields: dict[str, Any],
    *,
    api_version: str,
    time: str,
) -> None:
    for entry in entries:
        same = (entry.get("manager"), entry.get("operation"), entry.get("subresource") or "")
        if same == (manager, "Apply", subresource):
            entry["fieldsV1"] = merge_fields(entry.get("fieldsV1") or {}, fields)
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


def merge_fields(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """The union of two ``fieldsV1`` sets.

    An empty object is an owned leaf; when one side owns a node as a leaf and the other owns
    members below it, the union owns both: the node (``"."``) and the members.
    """
    out = copy.deepcopy(dict(a))
    for key, theirs in b.items():
        if key not in out:
            out[key] = copy.deepcopy(theirs)
            continue
        ours = out[key]
        if ours == theirs:
            continue
        if not ours or not theirs:
            out[key] = {".": {}, **(ours or {}), **copy.deepcopy(theirs or {})}
        else:
            out[key] = merge_fields(ours, theirs)
    return out


def count_fields(fields: Mapping[str, Any]) -> int:
    """Owned leaves and owned nodes (``"."``) in a ``fieldsV1`` set."""
    total = 0
    for key, child in fields.items():
        if key == "." or not child:
            total += 1
        else:
            total += count_fields(child)
    return total


def patch_body(plan: TakeoverPlan) -> list[dict[str, Any]]:
    """A JSON patch replacing managedFields (nothing else), guarded by the resourceVersion.

    Replacing (not testing) the resourceVersion makes it a precondition of the write, so a
    concurrent change fails with 409 Conflict from storage rather than a patch error (as
    client-go's csaupgrade does).
    """
    return [
        {"op": "replace", "path": "/metadata/managedFields", "value": plan.managed_fields},
        {"op": "replace", "path": "/metadata/resourceVersion", "value": plan.resource_version},
    ]


@dataclass(frozen=True, slots=True)
class TakeoverResult:
    """The object after the takeover (the dry-run result when ``dry_run``); None plan = no-op."""

    object: dict[str, Any]
    plan: TakeoverPlan | None
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return self.plan is not None


async def take_over(
    engine: Any,
    live: Mapping[str, Any],
    *,
    content_manager: str,
    ownership_manager: str,
    status_manager: str | None = None,
    policy: TakeoverPolicy = KUBECTL,
    dry_run: bool | None = None,
) -> TakeoverResult:
    """Move the Update entries ``policy`` names into our managers, in one guarded write.

    ``engine`` is the apply :class:`~syncagent.ssa.Engine` (its HTTP client and resource
    resolver are used). ``dry_run`` defaults to the engine's ``plan_only`` attribute, so a
    planning engine never writes. Raises ``PreconditionError`` when the object changed since
    ``live`` was read (re-read it and call again).
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
    if not plan.resource_version:
        raise SsaError(plan.subject, "takeover needs the live object's resourceVersion")
    if dry_run is None:
        dry_run = bool(getattr(engine, "plan_only", False))
    result = await _patch(engine, ref_of(live), patch_body(plan), dry_run=dry_run)
    if not dry_run:
        engine.cache.forget(ref_of(live))
    observe = getattr(engine, "observe_takeover", None)
    if observe is not None:
        # A planning engine keeps the object as it really is (before) for its comparisons.
        observe(dict(live), result)
    return TakeoverResult(result, plan, dry_run=dry_run)


async def _patch(
    engine: Any, ref: ObjectRef, body: Sequence[Mapping[str, Any]], *, dry_run: bool
) -> dict[str, Any]:
    return await engine.api.patch(ref, list(body), content_type=JSON_PATCH, dry_run=dry_run)


def needs_takeover(live: Mapping[str, Any] | None, *, policy: TakeoverPolicy = KUBECTL) -> bool:
    """Whether ``live`` has entries ``policy`` would take over (cheap, for callers' guards)."""
    if not live:
        return False
    raw = (live.get("metadata") or {}).get("managedFields") or []
    return any(policy.is_old(e) for e in raw)
