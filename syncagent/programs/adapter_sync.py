"""The graph's scaling adapters (docs/api.md §4): each component with ``scalingAdapter`` gets
its DGDSA, and an adapter the graph controls whose component no longer asks for one goes.

Every pathway runs this step (``skeleton.run``). An adapter is created once with the
component's replicas by a plain create: an autoscaler may already have scaled an adapter this
reconcile's cache does not show yet, and a create never overwrites it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from fieldmanagers import scalingadapters
from syncagent.kube import being_deleted, kinds
from syncagent.kube.objects import Body
from syncagent.programs.base import write_event
from syncagent.programs.migration import owned
from syncagent.programs.view import Obj
from syncagent.render import graph_owner
from syncagent.render.scalingadapters import Adapter, adapters
from syncagent.ssa import PreconditionError, SsaError, owner_of

if TYPE_CHECKING:
    from syncagent.programs.context import GraphContext

log = logging.getLogger(__name__)
KIND = kinds.SCALING_ADAPTER.kind


async def sync(ctx: GraphContext) -> None:
    """Create or update the adapters the graph asks for; delete the others it controls."""
    wanted = adapters(ctx.typed, owner=graph_owner(ctx.typed))
    for adapter in wanted:
        await _ensure(ctx, adapter)
    names = {a.content.name for a in wanted}
    for obj in owned(ctx.store, KIND, ctx.namespace, Body(ctx.graph).meta.uid):
        if Body(obj).meta.name not in names and not being_deleted(obj):
            await ctx.writer.delete(obj)


async def _ensure(ctx: GraphContext, adapter: Adapter) -> None:
    live = ctx.store.get(KIND, ctx.namespace, adapter.content.name)
    if being_deleted(live):
        return  # recreated, seeded afresh, once it is gone
    if live is None:
        live = await _seed(ctx, adapter)
    await ctx.writer.apply_owned(adapter.content, owner=owner_of(ctx.graph), live=live)


async def _seed(ctx: GraphContext, adapter: Adapter) -> Obj:
    """Create the adapter with its first replicas; one that exists already is read instead."""
    writer, rendered = ctx.writer, adapter.content
    await writer.confirm_owner(owner_of(ctx.graph), rendered)
    try:
        created = await writer.applier.create(adapter.seed(), manager=scalingadapters.SEED.name)
    except PreconditionError:
        found = await writer.applier.get(rendered.body)
        if found is None:
            raise SsaError(
                f"{KIND}/{rendered.namespace}/{rendered.name}", "appeared and went; retry"
            ) from None
        return found
    writer.events.append(write_event("created", KIND, rendered.name, on=writer.on))
    log.info(
        "created with %d replicas",
        adapter.replicas,
        extra={"object": f"{KIND}/{rendered.namespace}/{rendered.name}"},
    )
    return created
