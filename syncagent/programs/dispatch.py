"""Which program reconciles a graph (spec/routing.md §2) and what it renders as DCDs.

The outer DGD reconciler calls :func:`run_program` with the routed context. The Component
program is followed by the migration step that leaves the DS or Grove pathway (routing.md §3).
"""

from __future__ import annotations

from syncagent.programs import component_migration, routing
from syncagent.programs.base import ProgramResult
from syncagent.programs.component import ComponentProgram
from syncagent.programs.context import GraphContext
from syncagent.programs.disaggregatedset import DisaggregatedSetProgram
from syncagent.programs.grove import GroveProgram
from syncagent.render.disaggregatedset import selected_components


async def run_program(ctx: GraphContext) -> ProgramResult:
    pathway = ctx.selection.pathway
    if pathway is routing.Pathway.GROVE:
        return await GroveProgram().reconcile(ctx)
    if pathway is routing.Pathway.DISAGGREGATED_SET:
        return await DisaggregatedSetProgram().reconcile(ctx)
    result = await ComponentProgram().reconcile(ctx)
    return await component_migration.finish(ctx, result)


def dcd_component_names(ctx: GraphContext) -> list[str] | None:
    """Components rendered as DCDs: all (None) on the Component pathway, none on Grove, the
    non-selected ones on the DS pathway (validation rule V16 applies only to those)."""
    pathway = ctx.selection.pathway
    if pathway is routing.Pathway.COMPONENT:
        return None
    if pathway is routing.Pathway.GROVE:
        return []
    components = list((ctx.graph.get("spec") or {}).get("components") or [])
    selected = {str(c["name"]) for c in selected_components(components)}
    return [str(c["name"]) for c in components if str(c["name"]) not in selected]
