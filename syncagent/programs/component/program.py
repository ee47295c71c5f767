"""The Component program's declaration (docs/routing.md §2-3): one DynamoComponentDeployment per
component. It takes every graph no other program claims, and leaves the DS or Grove pathway
(the migration step) once its DCDs serve.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from syncagent.api import DynamoGraphDeployment
from syncagent.kube import kinds
from syncagent.programs.capabilities import LWS, Capabilities
from syncagent.programs.program import Claim, PathwayFunctions, Program, Route
from syncagent.render import Environment, Rendered, render_graph

if TYPE_CHECKING:
    from syncagent.programs.base import ProgramResult
    from syncagent.programs.context import GraphContext


PATHWAY = "Component"


class ComponentFunctions(PathwayFunctions):
    """Takes every graph; renders every component as a DynamoComponentDeployment."""

    def claim(self, route: Route) -> Claim:
        return Claim(True)

    def render(
        self, graph: DynamoGraphDeployment, *, env: Environment, caps: Capabilities
    ) -> list[Rendered]:
        return render_graph(graph, env=env, lws=caps.has(LWS))

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        # Imported here: declaring the program (render, --help) needs none of its reconcile.
        from syncagent.programs.component import cutover
        from syncagent.programs.component.reconcile import ComponentReconcile

        result = await ComponentReconcile().reconcile(ctx)
        return await cutover.finish(ctx, result)


def component_program() -> Program:
    """The fallback pathway. Its DCDs and their workloads are watched by the reconcilers (the
    DCD reconciler runs for standalone DCDs too), so it adds no watches of its own; it writes
    with the common field managers only (components, workloads, services)."""
    return Program(
        name="component",
        pathway=PATHWAY,
        summary="Component (DynamoComponentDeployments, Deployments, LeaderWorkerSets)",
        capability=None,
        owns=(kinds.DCD,),
        functions=ComponentFunctions(),
    )
