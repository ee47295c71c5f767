"""One reconcile of a graph on the toy pathway: apply its ToySet, report it ready once the
ToySet says so, and remove what another pathway left (the same cleanup as every migration)."""

from __future__ import annotations

from syncagent.kube.objects import Body
from syncagent.programs import migration, status
from syncagent.programs.base import ProgramResult
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.readiness import Readiness
from syncagent.ssa import owner_of
from tests.support.toypathway.kind import TOY
from tests.support.toypathway.program import render_toy_set


async def reconcile(ctx: GraphContext) -> ProgramResult:
    """Its errors become the graph's status as every pathway's do (``programs.graph``)."""
    rendered = render_toy_set(ctx.typed)
    live = ctx.store.get(TOY.kind, ctx.namespace, rendered.name)
    entry = await ctx.writer.apply_owned(rendered, owner=owner_of(ctx.graph), live=live)
    ready = Body(entry.object).status.get("ready") is True
    readiness = Readiness(ready, "" if ready else "ToySet not ready")
    result = status.result_of([(rendered.name, readiness)])
    stale = migration.other_pathways(ctx, ctx.selection.pathway)
    stale = await migration.retire(ctx, stale, when=result.ready)
    built = build_status(ctx, result, stale=migration.describe(stale))
    return ProgramResult(built, list(ctx.writer.events))
