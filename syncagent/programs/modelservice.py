"""The shared model Service ``dynamo-model-<hash8>`` (docs/rendering.md §4).

Every owner applies the same content under ``syncagent/services`` and its own reference item
under ``syncagent/owner/<uid>``; ``syncagent/ownership`` marks exactly one item as controller.
An owner that stops referencing the model leaves (an empty apply under its manager); the last
owner deletes the Service with UID and resourceVersion preconditions.

Co-owners take turns (:func:`turn`): the agent's reconciles run at once on one event loop, and a
graph handing the Service to its DCDs while they join it, each deciding on a watch cache that had
not seen the others' writes, used to refuse each other's guarded writes (409) several times per
join. One turn per Service at a time, decided on the freshest copy this agent knows
(docs/ownership.md §4).
"""

from __future__ import annotations

import contextlib
import enum
import logging
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from fieldmanagers import services
from syncagent.kube import being_deleted, controlled_by, controller_of, kinds
from syncagent.kube.objects import Body, Meta
from syncagent.programs.ownership import SCHEME
from syncagent.programs.view import Obj, Store
from syncagent.programs.writes import RefusedError, Writer, refused
from syncagent.render import Rendered
from syncagent.render import labels as L
from syncagent.render.naming import MODEL_SERVICE_PREFIX
from syncagent.ssa import (
    ApplyOptions,
    ConflictError,
    InvalidError,
    OwnerRef,
    OwnershipError,
    PreconditionError,
    adoption_blockers,
    join,
    leave,
)

log = logging.getLogger(__name__)


class Absent(enum.Enum):
    VIEW = "the watch cache's view"


ABSENT_VIEW = Absent.VIEW
# Owners whose control of a shared model Service we accept: graphs and components of any graph.
CO_OWNER_KINDS = frozenset({kinds.DGD.kind, kinds.DCD.kind})


def _items(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [dict(item) for item in Body(obj).meta.owner_references]


@dataclass
class Turn:
    """One co-owner's turn on a model Service: ``view`` is what to decide on; the holder sets
    ``left`` to the Service as its last write returned it."""

    view: Obj | None
    left: Obj | None = None


@dataclass
class _Turns:
    """Per model Service (namespace, name): the lock its turns take, and what the last turn
    that wrote it left, until the watch cache shows that version (or one turn has used it)."""

    locks: dict[tuple[str, str], anyio.Lock] = field(default_factory=dict)
    left: dict[tuple[str, str], Obj] = field(default_factory=dict)


# Per store: the agent has one; each ``syncagent plan`` run and each test has its own.
_TURNS: weakref.WeakKeyDictionary[Store, _Turns] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def turn(store: Store, namespace: str, name: str) -> AsyncIterator[Turn]:
    """This agent's one turn at a time on the model Service ``namespace/name``. Its view is the
    watch cache's copy, or, while the cache has not caught up with the previous turn's writes,
    what those writes returned: so a co-owner decides on what the last one left, not on a copy
    its guarded write would find stale. A writer outside the agent can still make that copy
    stale: the guarded write then fails and the caller decides again on a fresh read."""
    key, turns = (namespace, name), _TURNS.setdefault(store, _Turns())
    lock = turns.locks.setdefault(key, anyio.Lock())
    try:
        async with lock:
            cached = store.get("Service", namespace, name)
            held = Turn(_freshest(cached, turns.left.pop(key, None)))
            yield held
            if held.left is not None and _version(held.left) != _version(held.view):
                turns.left[key] = held.left
    finally:
        unused = not lock.locked() and not lock.statistics().tasks_waiting
        if unused and turns.locks.get(key) is lock:
            del turns.locks[key]


def _freshest(cached: Obj | None, left: Obj | None) -> Obj | None:
    if left is None or (cached is not None and _version(cached) == _version(left)):
        return cached
    return left


def _version(obj: Obj | None) -> str:
    return Body(obj).meta.resource_version if obj is not None else ""


async def ensure(
    writer: Writer,
    store: Store,
    rendered: Rendered,
    *,
    owner: OwnerRef,
    live: Obj | Absent | None = ABSENT_VIEW,
    held: Turn | None = None,
) -> Obj | None:
    """Join (or create) the model Service as a co-owner; returns the live object after it.

    ``held``: the caller's turn on the Service (else one is taken). ``live`` is the caller's
    view when it just wrote the Service; by default the turn's. A write decided on a view that
    turned out stale (an owner outside this agent moved it) is decided once more on a fresh
    read."""
    if held is None:
        async with turn(store, rendered.namespace, rendered.name) as taken:
            return await ensure(writer, store, rendered, owner=owner, live=live, held=taken)
    view = held.view if isinstance(live, Absent) else live
    try:
        held.left = await _ensure(writer, rendered, owner=owner, live=view)
        return held.left
    except (PreconditionError, OwnershipError, InvalidError, ConflictError) as err:
        if isinstance(err, InvalidError) and not _two_controllers(err):
            raise
        log.info(
            "model Service changed while being joined; deciding again",
            extra={"object": f"Service/{rendered.namespace}/{rendered.name}"},
        )
    fresh = await writer.applier.get(rendered.body)
    held.left = await _ensure(writer, rendered, owner=owner, live=fresh)
    return held.left


def _two_controllers(err: InvalidError) -> bool:
    """Two owners created the Service at once, each with its controller item (the API server
    rejects the second); the loser joins the winner."""
    return "Only one reference can have Controller set to true" in str(err)


async def _ensure(
    writer: Writer, rendered: Rendered, *, owner: OwnerRef, live: Obj | None
) -> Obj | None:
    if being_deleted(live):
        return live
    if live is None:
        entry = await writer.apply_owned(rendered, owner=owner, live=None)
        joined = await join(
            writer.applier, entry.object, owner=owner, scheme=SCHEME, live=entry.object
        )
        return joined.object
    current = controller_of(live)
    if current is not None and current.kind not in CO_OWNER_KINDS:
        raise RefusedError(
            f"Service/{rendered.namespace}/{rendered.name}",
            f"Service {rendered.namespace}/{rendered.name} is controlled by {current.describe()}",
        )
    if current is None:
        if adoption_blockers(live, scheme=SCHEME):
            raise refused("Service", rendered.namespace, rendered.name, owner=owner)
        # The controller went away (garbage collection dropped its item): take control.
        live = await writer.set_controller(live, controller=owner, manager=rendered.manager)
    live = await writer.take_over(live, manager=rendered.manager) or live
    content = await writer.apply(
        rendered.manifest(), ApplyOptions(manager=rendered.manager, force=True), live=live
    )
    joined = await join(
        writer.applier, content.object, owner=owner, scheme=SCHEME, live=content.object
    )
    return joined.object


async def leave_others(
    writer: Writer, store: Store, *, namespace: str, owner: OwnerRef, keep: str | None
) -> None:
    """Leave every model Service this owner co-owns except ``keep`` (its current one)."""
    for svc in store.list("Service", namespace, owner=owner.uid):
        view = Body(svc)
        if view.meta.name == keep or not _is_model_service(view.meta):
            continue
        if view.being_deleted or not view.owned_by(owner.uid):
            continue
        await leave_one(writer, store, svc, owner=owner)


def _is_model_service(meta: Meta) -> bool:
    # Component Services carry the model-hash label too; only the shared ones are named so.
    return meta.name.startswith(MODEL_SERVICE_PREFIX) and bool(meta.labels.get(L.BASE_MODEL_HASH))


async def leave_one(writer: Writer, store: Store, svc: Obj, *, owner: OwnerRef) -> None:
    """Leave the model Service ``svc`` in a turn of its own (its view decides)."""
    meta = Body(svc).meta
    async with turn(store, meta.namespace, meta.name) as held:
        current = held.view
        if current is None or being_deleted(current) or not Body(current).owned_by(owner.uid):
            return
        held.left = await _leave(writer, current, owner=owner)


async def _leave(writer: Writer, svc: Obj, *, owner: OwnerRef) -> Obj | None:
    others = [i for i in _items(svc) if i.get("uid") != owner.uid]
    meta = Body(svc).meta
    if not others:
        try:
            await writer.applier.delete(svc, uid=meta.uid, resource_version=meta.resource_version)
        except PreconditionError:
            log.info(
                f"{Body(svc).subject}: model Service changed; deciding again",
                extra={"service": meta.name},
            )
        return None
    if controlled_by(svc, owner.uid):
        first = others[0]
        successor = OwnerRef(first["apiVersion"], first["kind"], first["name"], first["uid"])
        svc = await writer.set_controller(svc, controller=successor, manager=services.MANAGER.name)
    return (await leave(writer.applier, svc, owner_uid=owner.uid, scheme=SCHEME, live=svc)).object
