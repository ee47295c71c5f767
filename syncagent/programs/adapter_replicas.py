"""What upstream's adapter controller does, as a step of the graph reconcile (docs/api.md §4):
each adapter's replicas written into its component in the graph's spec, then the adapter's
status (its replicas and the selector HPA reads through ``/scale``).

The graph's spec changes here only; the next reconcile (the graph's own watch event) renders
the new replicas to the workloads, as a user's edit would be.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from fieldmanagers import scalingadapters
from syncagent.kube import being_deleted, kinds
from syncagent.kube.objects import Body
from syncagent.programs.base import NORMAL, QueuedEvent
from syncagent.programs.migration import owned
from syncagent.programs.view import Obj
from syncagent.render.scalingadapters import Scale, adapter_status, scale_patch, scales
from syncagent.rest.request import JSON_PATCH
from syncagent.ssa import ApplyOptions

if TYPE_CHECKING:
    from syncagent.programs.context import GraphContext

log = logging.getLogger(__name__)
KIND = kinds.SCALING_ADAPTER.kind


async def follow(ctx: GraphContext) -> None:
    """The graph's adapters (as the cache shows them) into its components, then their status.
    An adapter whose component no longer asks for one is left to ``adapter_sync``."""
    asking = {c.name for c in ctx.typed.spec.components if c.scaling_adapter is not None}
    live = [
        obj
        for obj in owned(ctx.store, KIND, ctx.namespace, Body(ctx.graph).meta.uid)
        if not being_deleted(obj)
        and _ref(obj).get("name") == ctx.name
        and _ref(obj).get("componentName") in asking
    ]
    wanted = {str(_ref(o).get("componentName")): int(o["spec"]["replicas"]) for o in live}
    changes = scales(ctx.typed, wanted)
    if changes:
        await _scale(ctx, changes)
    scaled = {c.component for c in changes}
    for obj in live:
        await _status(ctx, obj, scaled=str(_ref(obj).get("componentName")) in scaled)


def _ref(adapter: Obj) -> dict[str, Any]:
    return dict((adapter.get("spec") or {}).get("dgdRef") or {})


async def _scale(ctx: GraphContext, changes: list[Scale]) -> None:
    writer = ctx.writer
    await writer.applier.patch(
        ctx.graph,
        scale_patch(changes),
        manager=scalingadapters.REPLICAS.name,
        content_type=JSON_PATCH,
    )
    for change in changes:
        message = (
            f"Scaled component {change.component} from {change.before} to {change.after} "
            "replicas (its scaling adapter)"
        )
        writer.events.append(QueuedEvent(NORMAL, "Scaled", message, writer.on))
        log.info(message, extra={"object": f"{kinds.DGD.kind}/{ctx.namespace}/{ctx.name}"})


async def _status(ctx: GraphContext, adapter: Obj, *, scaled: bool) -> None:
    meta = Body(adapter).meta
    previous = (adapter.get("status") or {}).get("lastScaleTime")
    status = adapter_status(
        ctx.name,
        str(_ref(adapter).get("componentName")),
        replicas=int(adapter["spec"]["replicas"]),
        last_scale_time=ctx.now if scaled else previous,
    )
    desired = {
        "apiVersion": kinds.SCALING_ADAPTER.api_version,
        "kind": KIND,
        "metadata": {"name": meta.name, "namespace": meta.namespace},
        "status": status,
    }
    options = ApplyOptions(manager=scalingadapters.STATUS.name, force=True, subresource="status")
    await ctx.writer.apply(desired, options, live=adapter)
