"""Owner references written through server-side apply (docs/design.md §9).

Which field managers play which part is the caller's :class:`OwnershipScheme` (the one manager
holding every controller reference, the per-owner managers of co-owners, and the managers that
count as ours when deciding whether an object can be adopted): this module names none.

- ``apply_controlled``: the create protocol of docs/write-protocol.md (one content apply carrying
  the controller reference, which its content manager keeps) and, on an existing object, an
  ownership apply only to adopt.
- ``set_controller``: adoption and handoff, one ownership apply; other owners' items stay.
- ``join`` / ``leave``: a co-owner's own item under ``syncagent/owner/<uid>``.
- ``adoption_blockers``: whether a live object can be adopted (``kube.controller_of`` says
  who controls it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syncagent.kube.objects import Body, OwnerRef, controller_of
from syncagent.ssa import managedfields
from syncagent.ssa.applier import Applier
from syncagent.ssa.changeset import ChangeSetEntry
from syncagent.ssa.desired import ref_of
from syncagent.ssa.errors import (
    DesiredObjectError,
    ExistsError,
    OwnershipError,
    PreconditionError,
)
from syncagent.ssa.options import ABSENT, ApplyOptions, Live
from syncagent.ssa.paths import Field, Key

_ADOPTION_SUBRESOURCES = ("status", "scale")
_FINALIZERS = (Field("metadata"), Field("finalizers"))
_REFS = (Field("metadata"), Field("ownerReferences"))


@dataclass(frozen=True, slots=True)
class OwnershipScheme:
    """The field managers of the ownership protocol.

    ``controller``: the manager that holds every controller reference item. ``owner_prefix``
    plus an owner's UID: the manager a co-owner writes its own reference item with.
    ``ours_prefix``: managers of ours, whose entries never block an adoption.
    """

    controller: str
    owner_prefix: str
    ours_prefix: str

    def owner(self, uid: str) -> str:
        return f"{self.owner_prefix}{uid}"

    def is_ours(self, manager: str) -> bool:
        return manager.startswith(self.ours_prefix)


def owner_of(owner: Mapping[str, Any]) -> OwnerRef:
    """The reference to a live owner object (which must carry its UID)."""
    view = Body(owner)
    if not view.meta.uid:
        raise OwnershipError(view.subject, "an owner needs its UID; read it first")
    return OwnerRef(view.api_version, view.kind, view.meta.name, view.meta.uid)


def adoption_blockers(live: Mapping[str, Any], *, scheme: OwnershipScheme) -> list[str]:
    """Why a live object cannot be adopted; empty means adoptable.

    Adoptable: no controller reference, and every managedFields entry of a manager outside
    ``scheme.ours_prefix`` is on the status or scale subresource or owns only finalizers.
    """
    reasons = []
    controller = controller_of(live)
    if controller is not None:
        reasons.append(f"it is controlled by {controller.describe()}")
    for entry in managedfields.decode(live):
        if scheme.is_ours(entry.manager) or entry.subresource in _ADOPTION_SUBRESOURCES:
            continue
        if all(path[:2] == _FINALIZERS for path in entry.fields):
            continue
        reasons.append(f"field manager {entry.manager!r} ({entry.operation}) owns fields")
    return reasons


def is_adoptable(live: Mapping[str, Any], *, scheme: OwnershipScheme) -> bool:
    return not adoption_blockers(live, scheme=scheme)


def skeleton(obj: Mapping[str, Any]) -> dict[str, Any]:
    """apiVersion, kind, name and namespace only: an empty configuration for that object."""
    meta = Body(obj).meta
    out_meta = {"name": meta.name}
    if meta.namespace:
        out_meta["namespace"] = meta.namespace
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": out_meta}


def with_references(obj: Mapping[str, Any], *items: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` whose ownerReferences also carry ``items``."""
    meta = Body(obj).meta
    return {**obj, "metadata": {**meta.raw, "ownerReferences": [*meta.owner_references, *items]}}


async def apply_controlled(
    engine: Applier,
    desired: Mapping[str, Any],
    options: ApplyOptions,
    *,
    controller: OwnerRef,
    scheme: OwnershipScheme,
    live: Live = None,
    shared: bool = False,
) -> list[ChangeSetEntry]:
    """Apply content to an object ``controller`` controls (or will, or may adopt).

    The create protocol of docs/write-protocol.md: an absent object is created by one content
    apply carrying the controller reference, and that content manager keeps the reference
    (every later content apply carries it again, so it converges without a write). A
    ``shared`` object (co-owned: the model Services) still hands the reference to the ownership
    manager at once, because its owners apply the same content under one manager.

    ``live`` None (the caller cannot tell whether it exists): the create is sent without a read.
    It is create-only (``certain.targeted``), so an object of that name fails it untouched; that
    object is then read and decided on as below.

    Existing: refuse if someone else controls it or it is not adoptable. Adoption (no
    controller) is the ownership apply, then the content apply without the reference. An object
    we control gets the content apply only, carrying the reference exactly when its content
    manager already holds it. ``options`` are the content applies' (the ownership apply is
    always forced); their ``on_conflict`` goes to the content apply of an existing object only.
    Returns the entries in write order; the first entry of ``options.manager`` says what
    happened to the content.
    """
    if controller_of(desired) is not None:
        raise DesiredObjectError(
            ref_of(desired).subject,
            "the desired content carries a controller reference; pass it as controller= instead",
        )
    current = await engine.view_for_create(desired, live)
    if current is None:
        try:
            return await _create(
                engine, desired, options, controller=controller, scheme=scheme, shared=shared
            )
        except ExistsError:
            if live is not None:
                raise  # the caller saw it absent: its view is stale, let it decide again
        # Nobody said whether it exists, and it does: decide on the object as it is.
        current = await engine.get(desired)
        if current is None:
            raise PreconditionError(ref_of(desired).subject, "appeared and went; retry")
    return await _apply_existing(
        engine, desired, options, current, controller=controller, scheme=scheme, shared=shared
    )


async def _apply_existing(
    engine: Applier,
    desired: Mapping[str, Any],
    options: ApplyOptions,
    current: dict[str, Any],
    *,
    controller: OwnerRef,
    scheme: OwnershipScheme,
    shared: bool,
) -> list[ChangeSetEntry]:
    _check_may_control(ref_of(desired).subject, current, controller, scheme)
    entries = []
    if controller_of(current) is None:
        owned = await set_controller(
            engine, desired, controller=controller, scheme=scheme, live=current
        )
        entries.append(owned)
        current = owned.object
    keeps = not shared and options.manager in _holders(current, controller.uid)
    body = with_references(desired, controller.item(controller=True)) if keeps else desired
    entries.append(await engine.apply(body, options, live=current))
    return entries


async def _create(
    engine: Applier,
    desired: Mapping[str, Any],
    options: ApplyOptions,
    *,
    controller: OwnerRef,
    scheme: OwnershipScheme,
    shared: bool,
) -> list[ChangeSetEntry]:
    """One create-only content apply carrying the reference (``ExistsError`` if the name is
    taken); a co-owned object then hands the reference to the ownership manager."""
    content = await engine.apply(
        with_references(desired, controller.item(controller=True)),
        options.but(on_conflict=None),
        live=ABSENT,
    )
    if not shared:
        return [content]
    owned = await set_controller(
        engine, desired, controller=controller, scheme=scheme, live=content.object
    )
    release = await engine.apply(desired, options.but(on_conflict=None), live=owned.object)
    return [content, owned, release]


def _check_may_control(
    subject: str, live: Mapping[str, Any], controller: OwnerRef, scheme: OwnershipScheme
) -> None:
    if Body(live).being_deleted:
        raise OwnershipError(subject, "is being deleted; treat it as absent and retry later")
    problem = control_refusal(live, controller, scheme=scheme)
    if problem is not None:
        raise OwnershipError(subject, problem)


def control_refusal(
    live: Mapping[str, Any], controller: OwnerRef, *, scheme: OwnershipScheme
) -> str | None:
    """Why ``controller`` may not take ``live`` (None: it controls it already, or may adopt it).

    The one ownership check (docs/design.md §9): the engine's ``apply_controlled`` raises it as an
    :class:`OwnershipError`; programs check it before their first write and report the documented
    refusal text.
    """
    current = controller_of(live)
    if current is not None and current.uid != controller.uid:
        return (
            f"is controlled by {current.describe()}, not {controller.describe()}; refusing to "
            "change it (remove that controller reference or delete the object first)"
        )
    if current is None and (blockers := adoption_blockers(live, scheme=scheme)):
        return f"cannot adopt it: {'; '.join(blockers)}; delete it or remove those fields first"
    return None


async def set_controller(
    engine: Applier,
    obj: Mapping[str, Any],
    *,
    controller: OwnerRef,
    scheme: OwnershipScheme,
    live: Live = None,
) -> ChangeSetEntry:
    """The ownership apply: ``controller`` becomes the one controller reference.

    This adopts, repairs and hands off; other owners' items stay. Owner reference items are
    atomic under SSA, so every manager holding an item holds all of it, ``controller`` flag
    included. Hence, on a co-owned object, the old controller's own manager first rewrites its
    item without the flag, and the new controller's own manager applies its item with it:
    first when no controller is left, else after (two controller items are invalid).
    A previous controller's item held by any other manager is refused, naming the manager.
    """
    current = await engine.live_view(obj, live)
    if current is not None:
        current = await _release_old_controller(engine, obj, current, controller, scheme)
    new_holders = _holders(current, controller.uid) if current is not None else set()
    body = with_references(skeleton(obj), controller.item(controller=True))
    own = scheme.owner(controller.uid)
    first = own in new_holders and current is not None and controller_of(current) is None
    if first:  # then the ownership apply shares the value instead of conflicting with it
        owned = await guarded_apply(engine, body, ApplyOptions(manager=own), view=current)
        current = owned.object
    entry = await guarded_apply(
        engine, body, ApplyOptions(manager=scheme.controller, force=True), view=current
    )
    if own in new_holders and not first:
        await join(engine, obj, owner=controller, scheme=scheme, live=entry.object)
    return entry


async def _release_old_controller(
    engine: Applier,
    obj: Mapping[str, Any],
    live: dict[str, Any],
    new: OwnerRef,
    scheme: OwnershipScheme,
) -> dict[str, Any]:
    old = old_controller_to_release(live, new, subject=ref_of(obj).subject, scheme=scheme)
    if old is None:
        return live
    body = with_references(skeleton(obj), old.item(controller=False))
    entry = await guarded_apply(
        engine, body, ApplyOptions(manager=scheme.owner(old.uid), force=True), view=live
    )
    return entry.object


def old_controller_to_release(
    live: Mapping[str, Any], new: OwnerRef, *, subject: str, scheme: OwnershipScheme
) -> OwnerRef | None:
    """Before handing control to ``new``: the old controller whose own co-owner manager must
    first drop the flag (None if nothing to do). Refuses when any other manager holds it."""
    old = controller_of(live)
    if old is None or old.uid == new.uid:
        return None
    others = _holders(live, old.uid) - {scheme.controller}
    own = scheme.owner(old.uid)
    if others - {own}:
        raise OwnershipError(
            subject,
            f"the controller reference to {old.describe()} is also held by field manager(s) "
            f"{', '.join(sorted(others - {own}))}; apply their content without that reference "
            "first",
        )
    return old if own in others else None


def reference_holders(live: Mapping[str, Any], uid: str) -> set[str]:
    """Managers holding the (atomic) ownerReferences item of ``uid``."""
    return managedfields.managers_under(live, (*_REFS, Key((("uid", uid),))))


_holders = reference_holders


async def join(
    engine: Applier,
    obj: Mapping[str, Any],
    *,
    owner: OwnerRef,
    scheme: OwnershipScheme,
    live: Live = None,
) -> ChangeSetEntry:
    """A co-owner writes its own reference item under its own manager (``scheme.owner``).

    The item is the plain one, or the full controller item when ``owner`` controls the object:
    SSA shares an atomic item only between managers applying the same value. Only the
    controller item is guarded (``guarded_apply``): a plain one, unforced, cannot undo a
    handoff (docs/ownership.md §4), and co-owners joining at once do not refuse each other.
    """
    current = await engine.live_view(obj, live)
    controller = controller_of(current) if current is not None else None
    controls = controller is not None and controller.uid == owner.uid
    body = with_references(skeleton(obj), owner.item(controller=controls))
    options = ApplyOptions(manager=scheme.owner(owner.uid))
    if not controls:
        return await engine.apply(body, options, live=ABSENT if current is None else current)
    return await guarded_apply(engine, body, options, view=current)


async def guarded_apply(
    engine: Applier, body: dict[str, Any], options: ApplyOptions, *, view: dict[str, Any] | None
) -> ChangeSetEntry:
    """An ownership apply decided on ``view`` (often a watch cache's copy): it carries the
    view's resourceVersion as a precondition, so a stale view cannot undo a handoff another
    reconciler made a moment earlier. If the object changed but its owner references did not
    (a status write), the apply is repeated once on the fresh object; otherwise
    :class:`PreconditionError` tells the caller to read again and decide again."""
    rv = Body(view).meta.resource_version
    if view is None or not rv:
        return await engine.apply(body, options, live=ABSENT if view is None else view)
    guarded = options.but(resource_version_precondition=True)
    try:
        return await engine.apply(_at(body, rv), guarded, live=view)
    except PreconditionError:
        fresh = await engine.get(body)
        if fresh is None or _owner_items(fresh) != _owner_items(view):
            raise
    return await engine.apply(
        _at(body, str(fresh["metadata"]["resourceVersion"])), guarded, live=fresh
    )


def _at(body: dict[str, Any], resource_version: str) -> dict[str, Any]:
    return {**body, "metadata": {**body["metadata"], "resourceVersion": resource_version}}


def _owner_items(obj: Mapping[str, Any]) -> list[tuple[str, bool]]:
    return sorted((ref.uid, controls) for ref, controls in Body(obj).owners())


async def leave(
    engine: Applier,
    obj: Mapping[str, Any],
    *,
    owner_uid: str,
    scheme: OwnershipScheme,
    live: Live = None,
) -> ChangeSetEntry:
    """A co-owner leaves: an empty apply under its manager removes exactly its item.

    The controller cannot leave this way (its item is also the ownership manager's): move
    control to a remaining owner first, or delete the object if it is the last owner.
    """
    current = await engine.live_view(obj, live)
    if current is not None and (ctl := controller_of(current)) and ctl.uid == owner_uid:
        raise OwnershipError(
            ref_of(obj).subject,
            f"owner {ctl.describe()} controls the object and cannot leave; move control to "
            "another owner first (set_controller), or delete the object if it is the last owner",
        )
    return await engine.apply(
        skeleton(obj),
        ApplyOptions(manager=scheme.owner(owner_uid)),
        live=ABSENT if current is None else current,
    )
