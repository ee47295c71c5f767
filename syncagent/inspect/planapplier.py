"""The applier of ``syncagent plan``: dry runs only, never a write.

The programs run unchanged against it: it implements the same
:class:`~syncagent.ssa.applier.Applier` as the agent's :class:`~syncagent.ssa.Engine` and
reads through one, so every ``apply`` is :meth:`Engine.preview` (a server-side dry run under
the same manager and force policy), every ``patch``, takeover, create and update a server-side
dry run, and every ``delete`` is recorded as ``would-delete``. Dry runs are not persisted, so
a second apply to the same object (the ownership apply after a content apply) is dry-run
against the real live object; the applier then composes the results: each dry run contributes
the parts it changed relative to the real live object, and programs see that composition as
the apply's result.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from syncagent.kube.objects import Body
from syncagent.rest.request import JSON_PATCH, MERGE_PATCH
from syncagent.ssa import (
    ABSENT,
    ApplyOptions,
    ChangeSetEntry,
    Conflict,
    ConflictError,
    Engine,
    ref_of,
)
from syncagent.ssa.options import Live
from syncagent.ssa.verbs import takeover_patch

_META_PARTS = ("labels", "annotations", "ownerReferences", "finalizers")


@dataclass(frozen=True, slots=True)
class Recorded:
    """One apply the programs asked for: the desired body and the dry-run entry."""

    subject: str
    manager: str
    desired: dict[str, Any]
    entry: ChangeSetEntry
    force: bool
    subresource: str = ""


@dataclass(frozen=True, slots=True)
class Refused:
    """A non-forced apply the server refused with conflicts (the agent's apply fails too)."""

    subject: str
    manager: str
    desired: dict[str, Any]
    conflicts: tuple[Conflict, ...]


@dataclass(frozen=True, slots=True)
class Deleted:
    subject: str
    live: dict[str, Any]


@dataclass
class Records:
    """Everything one plan run recorded, in the order the programs asked for it."""

    applies: list[Recorded] = field(default_factory=list)
    deletes: list[Deleted] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    real: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    composed: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    # Writes made around server-side apply (say a merge patch to /scale), made as dry runs.
    other_writes: list[str] = field(default_factory=list)

    def see(self, subject: str) -> None:
        if subject not in self.order:
            self.order.append(subject)


class PlanApplier:
    """An :class:`~syncagent.ssa.applier.Applier` whose writes are dry runs sent through
    ``engine`` (which it never asks to write); ``records`` says what would happen."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.records = Records()

    async def apply(
        self, desired: Mapping[str, Any], options: ApplyOptions, *, live: Live = None
    ) -> ChangeSetEntry:
        subject = ref_of(desired).subject
        base = await self._real(desired, live)
        if base is None and subject in self.records.composed:
            # Already created by an earlier dry run of this plan: a second dry-run create (an
            # ownership skeleton) could be invalid on its own and says nothing new.
            entry = ChangeSetEntry(
                action="created",
                subject=subject,
                object=copy.deepcopy(self.records.composed[subject]),
                manager=options.manager,
                subresource=options.subresource,
                dry_run=True,
            )
            self._record(subject, desired, entry, options)
            return entry
        try:
            entry = await self.engine.preview(
                desired, options, live=ABSENT if base is None else base
            )
        except ConflictError as err:
            self.records.see(subject)
            record = Refused(subject, options.manager, copy.deepcopy(dict(desired)), err.conflicts)
            self.records.refused.append(record)
            raise
        composed = compose(
            self.records.composed.get(subject), base, entry.object, options.subresource
        )
        self.records.composed[subject] = composed
        self.records.see(subject)
        self._record(subject, desired, entry, options)
        return dataclasses.replace(entry, object=copy.deepcopy(composed))

    async def preview(
        self, desired: Mapping[str, Any], options: ApplyOptions, *, live: Live = None
    ) -> ChangeSetEntry:
        return await self.engine.preview(desired, options, live=live)

    async def delete(
        self,
        obj: Mapping[str, Any],
        *,
        uid: str,
        resource_version: str | None = None,
        propagation: str = "Background",
    ) -> bool:
        subject = ref_of(obj).subject
        self.records.see(subject)
        self.records.deletes.append(Deleted(subject, copy.deepcopy(dict(obj))))
        return True

    async def get(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any] | None:
        subject = ref_of(obj).subject
        if not subresource and subject in self.records.composed:
            return copy.deepcopy(self.records.composed[subject])
        found = await self.engine.get(obj, subresource=subresource)
        if not subresource:
            self.records.real.setdefault(subject, copy.deepcopy(found))
        return found

    async def read(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any] | None:
        return await self.engine.read(obj, subresource=subresource)

    async def list(self, api_version: str, kind: str, namespace: str) -> list[dict[str, Any]]:
        return await self.engine.list(api_version, kind, namespace)

    async def path_of(self, obj: Mapping[str, Any], *, subresource: str = "") -> str:
        return await self.engine.path_of(obj, subresource=subresource)

    async def live_view(self, obj: Mapping[str, Any], live: Live = None) -> dict[str, Any] | None:
        if live is None:
            return await self.get(obj)
        return await self.engine.live_view(obj, live)

    async def view_for_create(self, obj: Mapping[str, Any], live: Live) -> dict[str, Any] | None:
        # A dry-run create is not create-only (nothing is created to refuse the next one):
        # read first, as the agent's create would find out.
        return await self.live_view(obj, live)

    async def owner_alive(self, owner: Mapping[str, Any], *, uid: str) -> bool:
        return True  # what the plan creates exists in the plan; the agent confirms on the day

    def _record(
        self,
        subject: str,
        desired: Mapping[str, Any],
        entry: ChangeSetEntry,
        options: ApplyOptions,
    ) -> None:
        body = copy.deepcopy(dict(desired))
        self.records.applies.append(
            Recorded(subject, options.manager, body, entry, options.force, options.subresource)
        )

    async def patch(
        self,
        obj: Mapping[str, Any],
        body: Any,
        *,
        manager: str,
        content_type: str = MERGE_PATCH,
        subresource: str = "",
    ) -> dict[str, Any]:
        """A write the programs make around server-side apply (a Grove ``/scale`` patch): a dry
        run, listed as an other write."""
        result = await self.engine.api.patch(
            ref_of(obj),
            body,
            content_type=content_type,
            manager=manager,
            dry_run=True,
            subresource=subresource,
        )
        self.records.other_writes.append(
            f"PATCH {await self.path_of(obj, subresource=subresource)}"
        )
        return result

    async def replace_managed_fields(
        self, live: Mapping[str, Any], managed_fields: list[dict[str, Any]]
    ) -> dict[str, Any]:
        result = await self.engine.api.patch(
            ref_of(live),
            takeover_patch(live, managed_fields),
            content_type=JSON_PATCH,
            dry_run=True,
        )
        self.observe_takeover(dict(live), result)
        return result

    async def create(self, obj: Mapping[str, Any], *, manager: str) -> dict[str, Any]:
        return await self.engine.api.create(ref_of(obj), obj, manager=manager, dry_run=True)

    async def update(self, obj: Mapping[str, Any], *, manager: str) -> dict[str, Any]:
        return await self.engine.api.update(ref_of(obj), obj, manager=manager, dry_run=True)

    def observe_takeover(self, before: dict[str, Any], after: dict[str, Any]) -> None:
        """A program's takeover (dry-run here): later applies compare with the real object."""
        subject = ref_of(before).subject
        self.records.real.setdefault(subject, copy.deepcopy(before))
        self.records.see(subject)

    async def _real(self, desired: Mapping[str, Any], live: Live) -> dict[str, Any] | None:
        """The object as it really is (first view wins: later views may be compositions)."""
        subject = ref_of(desired).subject
        if subject in self.records.real:
            return self.records.real[subject]
        if live is ABSENT:
            real: dict[str, Any] | None = None
        elif live is None:
            real = await self.engine.get(desired)
        else:
            real = copy.deepcopy(dict(live))
        self.records.real[subject] = real
        return real


def compose(
    current: dict[str, Any] | None,
    base: Mapping[str, Any] | None,
    result: Mapping[str, Any],
    subresource: str = "",
) -> dict[str, Any]:
    """``current`` (earlier dry runs composed) plus what ``result`` changed relative to ``base``.

    For an absent object the first dry-run create is the starting point; later creates only add
    their managedFields entries (their other parts repeat the first one's or are skeletons).
    """
    if current is None:
        return copy.deepcopy(dict(result))
    out = copy.deepcopy(current)
    if base is None:
        _merge_entries(out, {}, result)
        return out
    parts = ["status"] if subresource == "status" else sorted(set(result) - {"metadata", "status"})
    for part in parts:
        _overlay(out, base, result, part)
    meta_out = out.setdefault("metadata", {})
    meta_base, meta_res = Body(base).meta.raw, Body(result).meta.raw
    for part in _META_PARTS:
        _overlay(meta_out, meta_base, meta_res, part)
    _merge_entries(out, base, result)
    return out


_MISSING: Any = object()


def _overlay(
    out: dict[str, Any], base: Mapping[str, Any], result: Mapping[str, Any], key: str
) -> None:
    """Put into ``out[key]`` what ``result`` changed relative to ``base``, field by field, so
    two dry runs that changed different fields of one part both show."""
    merged = _changed(out.get(key, _MISSING), base.get(key, _MISSING), result.get(key, _MISSING))
    if merged is _MISSING:
        out.pop(key, None)
    else:
        out[key] = merged


def _changed(current: Any, base: Any, result: Any) -> Any:
    if result == base:
        return current
    if result is _MISSING:
        return _MISSING
    if all(isinstance(v, Mapping) for v in (current, base, result)):
        out = copy.deepcopy(dict(current))
        for key in set(base) | set(result):
            _overlay(out, base, result, key)
        return out
    if all(isinstance(v, list) for v in (current, base, result)) and (
        len(current) == len(base) == len(result)
    ):
        # Same length: item by item (containers, ports); otherwise the result's list.
        return [_changed(c, b, r) for c, b, r in zip(current, base, result, strict=True)]
    return copy.deepcopy(result)


def _key(entry: Mapping[str, Any]) -> tuple[str, str, str]:
    return (
        str(entry.get("manager")),
        str(entry.get("operation")),
        str(entry.get("subresource") or ""),
    )


def _merge_entries(out: dict[str, Any], base: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """Take the managedFields entries ``result`` added, changed or removed relative to ``base``."""
    by_key = {_key(e): e for e in Body(base).meta.managed_fields}
    res = {_key(e): e for e in Body(result).meta.managed_fields}
    meta = out.setdefault("metadata", {})
    entries = {_key(e): e for e in meta.get("managedFields") or []}
    for key, entry in res.items():
        old = by_key.get(key)
        if old is None or old.get("fieldsV1") != entry.get("fieldsV1"):
            entries[key] = copy.deepcopy(entry)
    for key in set(by_key) - set(res):
        entries.pop(key, None)
    meta["managedFields"] = list(entries.values())
