"""Services of a graph that controls them itself: DS-selected components and Grove
(docs/disaggregatedset.md §5, docs/grove.md §1, docs/routing.md §3 handoff rules).

- Handoff: a Service controlled by a DCD of this graph passes to the graph. Created under
  docs/write-protocol.md, its content manager alone holds the reference: one content apply
  swaps the old item for the new one (never missing). Otherwise one ``syncagent/ownership``
  apply, after a content apply without the old reference (so only the ownership manager held
  it). The selector is kept until the new workload is ready.
- Refusal: a Service controlled by anything else is never touched.
- Model Services: joined as a co-owner; control taken only from nobody, this graph, or a DCD
  this graph hands over.
- Stale component Services are deleted (UID precondition) only once the graph is ``successful``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from syncagent.kube import being_deleted, controlled_by, controller_of, kinds
from syncagent.kube.objects import Body
from syncagent.programs import modelservice
from syncagent.programs.base import NORMAL, QueuedEvent
from syncagent.programs.ownership import SCHEME
from syncagent.programs.view import Obj, Store
from syncagent.programs.writes import RefusedError, Writer, refused
from syncagent.render import ComponentSource, Rendered, graph_owner, model_service
from syncagent.render import labels as L
from syncagent.render.naming import MODEL_SERVICE_PREFIX
from syncagent.ssa import ApplyOptions, OwnerRef, PreconditionError, adoption_blockers, owner_of
from syncagent.ssa.ownership import reference_holders, with_references

if TYPE_CHECKING:
    from syncagent.programs.context import GraphContext


def check_service(
    live: Obj | None, *, graph: OwnerRef, namespace: str, name: str, our_dcds: Collection[str]
) -> OwnerRef | None:
    """The DCD to hand over from (None if nothing to hand over); refuses foreign control."""
    if live is None:
        return None
    current = controller_of(live)
    if current is None:
        if adoption_blockers(live, scheme=SCHEME):
            raise refused("Service", namespace, name, owner=graph)
        return None
    if current.uid == graph.uid:
        return None
    if current.kind == kinds.DCD.kind and current.uid in our_dcds:
        return current
    if current.kind == kinds.DCD.kind:
        raise RefusedError(
            f"Service/{namespace}/{name}",
            f"Service {namespace}/{name} is controlled by unrelated DynamoComponentDeployment "
            f"{current.name}",
        )
    raise RefusedError(
        f"Service/{namespace}/{name}",
        f"Service {namespace}/{name} is controlled by {current.describe()}",
    )


def with_selector(rendered: Rendered, selector: Mapping[str, str]) -> Rendered:
    body = rendered.manifest()
    body["spec"]["selector"] = dict(selector)
    return dataclasses.replace(rendered, body=body)


async def hand_over(
    writer: Writer, rendered: Rendered, live: Obj, *, new: OwnerRef, old: OwnerRef
) -> Obj:
    """Move control of a live object from ``old`` to ``new``, content unchanged."""
    live = await writer.take_over(live, manager=rendered.manager) or live
    kept = rendered
    if rendered.kind == "Service":
        kept = with_selector(rendered, (live.get("spec") or {}).get("selector") or {})
    options = ApplyOptions(manager=rendered.manager, force=True)
    if reference_holders(live, old.uid) == {rendered.manager}:
        body = with_references(kept.manifest(), new.item(controller=True))
        handed = (await writer.apply(body, options, live=live)).object
    else:
        # The content manager may hold the old reference too; drop it there first.
        content = await writer.apply(kept.manifest(), options, live=live)
        handed = await writer.set_controller(
            content.object, controller=new, manager=rendered.manager
        )
    writer.events.append(
        QueuedEvent(
            NORMAL,
            "ServiceOwnershipTransferred",
            f"Service {rendered.name} ownership transferred from {old.kind} {old.name} to "
            f"{new.kind} {new.name}",
        )
    )
    return handed


async def ensure_component_service(
    writer: Writer,
    store: Store,
    rendered: Rendered,
    *,
    graph: OwnerRef,
    target: Mapping[str, str],
    switch: bool,
    our_dcds: Collection[str],
    hold: Callable[[Mapping[str, str]], Mapping[str, str]] = dict,
) -> Obj | None:
    """Apply the Service under the graph: handoff first, then until ``switch`` the live
    selector as ``hold`` keeps it, then ``target``."""
    live = store.get("Service", rendered.namespace, rendered.name)
    if live is None:
        # The caches hold labelled Services only; an unlabelled one of that name may exist.
        live = await writer.applier.get(rendered.body)
    if being_deleted(live):
        return None
    old = check_service(
        live, graph=graph, namespace=rendered.namespace, name=rendered.name, our_dcds=our_dcds
    )
    if live is not None and old is not None:
        live = await hand_over(writer, rendered, live, new=graph, old=old)
    selector = dict(target)
    if live is not None and not switch:
        selector = dict(hold((live.get("spec") or {}).get("selector") or target))
    entry = await writer.apply_owned(with_selector(rendered, selector), owner=graph, live=live)
    return entry.object


async def ensure_model_services(
    ctx: GraphContext, sources: Iterable[ComponentSource], *, take_from: Collection[str]
) -> None:
    """:func:`ensure_model_service` of ``ctx``'s graph for each model ``sources`` name, once
    each, in first-named order."""
    models: dict[str, Rendered] = {}
    for source in sources:
        if source.model and source.model not in models:
            owner = graph_owner(ctx.typed)
            models[source.model] = model_service(source.model, namespace=ctx.namespace, owner=owner)
    graph = owner_of(ctx.graph)
    for rendered in models.values():
        await ensure_model_service(
            ctx.writer, ctx.store, rendered, graph=graph, take_from=take_from
        )


async def ensure_model_service(
    writer: Writer, store: Store, rendered: Rendered, *, graph: OwnerRef, take_from: Collection[str]
) -> Obj | None:
    """Co-own the model Service; take control from a DCD in ``take_from`` (selected ones), in
    one turn on it (``modelservice.turn``). A handoff decided on a view that turned out stale is
    decided once more on a fresh read."""
    async with modelservice.turn(store, rendered.namespace, rendered.name) as held:
        try:
            return await _take_model_service(writer, store, rendered, held, graph, take_from)
        except PreconditionError:
            held.view = await writer.applier.get(rendered.body)
        return await _take_model_service(writer, store, rendered, held, graph, take_from)


async def _take_model_service(
    writer: Writer,
    store: Store,
    rendered: Rendered,
    held: modelservice.Turn,
    graph: OwnerRef,
    take_from: Collection[str],
) -> Obj | None:
    live = held.view
    if live is not None and not being_deleted(live):
        current = controller_of(live)
        if current is not None and current.uid in take_from:
            handed = await writer.set_controller(live, controller=graph, manager=rendered.manager)
            held.left = handed
            # the cache does not hold this write yet: join on what it returned
            return await modelservice.ensure(
                writer, store, rendered, owner=graph, live=handed, held=held
            )
    return await modelservice.ensure(writer, store, rendered, owner=graph, live=live, held=held)


def graph_controls(obj: Obj | None, graph: OwnerRef) -> bool:
    return obj is not None and controlled_by(obj, graph.uid)


async def delete_stale_services(
    writer: Writer,
    store: Store,
    *,
    namespace: str,
    graph: OwnerRef,
    keep: Collection[str],
    keep_models: Collection[str],
) -> None:
    """Component Services the graph controls and no longer wants; model Services it left."""
    for svc in store.list("Service", namespace, owner=graph.uid):
        if being_deleted(svc) or Body(svc).meta.name in keep:
            continue
        if _is_model_service(svc):
            continue
        if controlled_by(svc, graph.uid):
            await writer.delete(svc)
    for svc in store.list("Service", namespace, owner=graph.uid):
        if Body(svc).meta.name in keep_models or being_deleted(svc):
            continue
        if not _is_model_service(svc):
            continue
        if Body(svc).owned_by(graph.uid):
            await modelservice.leave_one(writer, store, svc, owner=graph)


def _is_model_service(svc: Obj) -> bool:
    """Component Services carry the model-hash label too; the name tells them apart."""
    meta = Body(svc).meta
    return meta.name.startswith(MODEL_SERVICE_PREFIX) and bool(meta.labels.get(L.BASE_MODEL_HASH))
