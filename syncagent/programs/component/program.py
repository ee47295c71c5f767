"""The Component program's declaration (docs/routing.md §2-3): one DynamoComponentDeployment per
component. It takes every graph no other program claims, and leaves the DS or Grove pathway
(the migration step) once its DCDs serve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from fieldmanagers.contract import FieldManager
from syncagent.api import Component, DynamoGraphDeployment
from syncagent.kube import kinds
from syncagent.programs.capabilities import LWS, Capabilities
from syncagent.programs.program import Claim, Condition, Route, Watched
from syncagent.render import Environment, Rendered, render_graph

if TYPE_CHECKING:
    from syncagent.programs.base import ProgramResult
    from syncagent.programs.context import GraphContext
    from syncagent.programs.routing import Selection


PATHWAY = "Component"


class ComponentProgram:
    """The fallback pathway. Its DCDs and their workloads are watched by the reconcilers (the
    DCD reconciler runs for standalone DCDs too), so it adds no watches of its own."""

    name = "component"
    pathway = PATHWAY
    capability = None
    owns = (kinds.DCD,)
    watches: tuple[Watched, ...] = ()
    managers: tuple[FieldManager, ...] = ()  # the common ones: components, workloads, services
    records: tuple[str, ...] = ()
    summary = "Component (DynamoComponentDeployments, Deployments, LeaderWorkerSets)"

    def wants(self, annotations: Mapping[str, str]) -> bool:
        return False

    def claim(self, route: Route) -> Claim:
        return Claim(True)

    def conditions(self, selection: Selection) -> tuple[Condition, ...]:
        return ()

    def cannot_render(self, route: Route) -> str:
        return ""

    def dcd_components(self, components: Sequence[Component]) -> list[str] | None:
        return None

    def render(
        self, graph: DynamoGraphDeployment, *, env: Environment, caps: Capabilities
    ) -> list[Rendered]:
        return render_graph(graph, env=env, lws=caps.has(LWS))

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        # Imported here: declaring the program (render, --help) needs none of its reconcile.
        from syncagent.programs.component import migration
        from syncagent.programs.component.reconcile import ComponentReconcile

        result = await ComponentReconcile().reconcile(ctx)
        return await migration.finish(ctx, result)
