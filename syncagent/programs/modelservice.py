"""The shared model Service ``dynamo-model-<hash8>`` (docs/rendering.md §4).

Every owner applies the same content under ``syncagent/services`` and its own reference item
under ``syncagent/owner/<uid>``; ``syncagent/ownership`` marks exactly one item as controller.
An owner that stops referencing the model leaves (an empty apply under its manager); the last
owner deletes the Service with UID and resourceVersion preconditions.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from typing import Any

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


async def ensure(
    writer: Writer,
    store: Store,
    rendered: Rendered,
    *,
    owner: OwnerRef,
    live: Obj | Absent | None = ABSENT_VIEW,
) -> Obj | None:
    """Join (or create) the model Service as a co-owner; returns the live object after it.

    ``live`` is the caller's view when it just wrote the Service (the watch cache lags behind
    its own write); by default the cache's. Another owner may move control at the same time:
    a write decided on a view that turned out stale is decided once more on a fresh read."""
    view = (
        store.get("Service", rendered.namespace, rendered.name)
        if isinstance(live, Absent)
        else live
    )
    try:
        return await _ensure(writer, rendered, owner=owner, live=view)
    except (PreconditionError, OwnershipError, InvalidError) as err:
        if isinstance(err, InvalidError) and not _two_controllers(err):
            raise
        log.info(
            "model Service changed while being joined; deciding again",
            extra={"object": f"Service/{rendered.namespace}/{rendered.name}"},
        )
    fresh = await writer.engine.get(rendered.body)
    return await _ensure(writer, rendered, owner=owner, live=fresh)


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
            writer.engine, entry.object, owner=owner, scheme=SCHEME, live=entry.object
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
        writer.engine, content.object, owner=owner, scheme=SCHEME, live=content.object
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
        await leave_one(writer, svc, owner=owner)


def _is_model_service(meta: Meta) -> bool:
    # Component Services carry the model-hash label too; only the shared ones are named so.
    return meta.name.startswith(MODEL_SERVICE_PREFIX) and bool(meta.labels.get(L.BASE_MODEL_HASH))


async def leave_one(writer: Writer, svc: Obj, *, owner: OwnerRef) -> None:
    others = [i for i in _items(svc) if i.get("uid") != owner.uid]
    meta = Body(svc).meta
    if not others:
        try:
            await writer.engine.delete(svc, uid=meta.uid, resource_version=meta.resource_version)
        except PreconditionError:
            log.info(
                f"{Body(svc).subject}: model Service changed; deciding again",
                extra={"service": meta.name},
            )
        return
    if controlled_by(svc, owner.uid):
        first = others[0]
        successor = OwnerRef(first["apiVersion"], first["kind"], first["name"], first["uid"])
        svc = await writer.set_controller(svc, controller=successor, manager=services.MANAGER.name)
    await leave(writer.engine, svc, owner_uid=owner.uid, scheme=SCHEME, live=svc)
