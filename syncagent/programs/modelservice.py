"""The shared model Service ``dynamo-model-<hash8>`` (spec/rendering.md §4.2).

Every owner applies the same content under ``syncagent/services`` and its own reference item
under ``syncagent/owner/<uid>``; ``syncagent/ownership`` marks exactly one item as controller.
An owner that stops referencing the model leaves (an empty apply under its manager); the last
owner deletes the Service with UID and resourceVersion preconditions.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fieldmanagers import services
from syncagent.programs.ownership import SCHEME
from syncagent.programs.view import Obj, Store, being_deleted
from syncagent.programs.writes import RefusedError, Writer
from syncagent.render import Rendered
from syncagent.render import labels as L
from syncagent.render.naming import MODEL_SERVICE_PREFIX
from syncagent.ssa import (
    ApplyOptions,
    OwnerRef,
    PreconditionError,
    adoption_blockers,
    controller_of,
    join,
    leave,
)

log = logging.getLogger(__name__)
# Owners whose control of a shared model Service we accept: graphs and components of any graph.
CO_OWNER_KINDS = frozenset({"DynamoGraphDeployment", "DynamoComponentDeployment"})


def _items(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])


async def ensure(
    writer: Writer, store: Store, rendered: Rendered, *, owner: OwnerRef
) -> Obj | None:
    """Join (or create) the model Service as a co-owner; returns the live object after it."""
    live = store.get("Service", rendered.namespace, rendered.name)
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
            f"Service {rendered.namespace}/{rendered.name} is controlled by {current.describe()}"
        )
    if current is None:
        if adoption_blockers(live, scheme=SCHEME):
            raise RefusedError(
                f"refusing to reconcile Service {rendered.name} because it is not controlled "
                f"by {owner.kind} {rendered.namespace}/{owner.name}"
            )
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
    for svc in store.list("Service", namespace):
        meta = svc.get("metadata") or {}
        if meta.get("name") == keep or not _is_model_service(meta):
            continue
        if being_deleted(svc) or not any(i.get("uid") == owner.uid for i in _items(svc)):
            continue
        await leave_one(writer, svc, owner=owner)


def _is_model_service(meta: Mapping[str, Any]) -> bool:
    # Component Services carry the model-hash label too; only the shared ones are named so.
    labels = meta.get("labels") or {}
    return str(meta.get("name", "")).startswith(MODEL_SERVICE_PREFIX) and bool(
        labels.get(L.BASE_MODEL_HASH)
    )


async def leave_one(writer: Writer, svc: Obj, *, owner: OwnerRef) -> None:
    others = [i for i in _items(svc) if i.get("uid") != owner.uid]
    meta = svc.get("metadata") or {}
    if not others:
        try:
            await writer.engine.delete(
                svc, uid=str(meta.get("uid")), resource_version=str(meta.get("resourceVersion"))
            )
        except PreconditionError:
            log.info("model Service changed; deciding again", extra={"service": meta.get("name")})
        return
    current = controller_of(svc)
    if current is not None and current.uid == owner.uid:
        first = others[0]
        successor = OwnerRef(first["apiVersion"], first["kind"], first["name"], first["uid"])
        svc = await writer.set_controller(svc, controller=successor, manager=services.MANAGER.name)
    await leave(writer.engine, svc, owner_uid=owner.uid, scheme=SCHEME, live=svc)
