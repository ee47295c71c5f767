"""The toy pathway's declaration: a graph annotated ``toy.example.com/enabled: "true"`` is
served by one ToySet listing its components while the ``toy`` capability is on (ToySets are
served); it takes precedence over every other pathway."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from fieldmanagers.contract import FieldManager
from syncagent.api import Component, DynamoGraphDeployment
from syncagent.programs.capabilities import Capabilities, Capability
from syncagent.programs.program import (
    CONTROLLER,
    GRAPH,
    Claim,
    PathwayFunctions,
    Program,
    Requeue,
    Route,
    Watched,
)
from syncagent.render import Environment, Rendered
from syncagent.render.dcd import graph_namespace, graph_owner
from syncagent.render.model import build
from tests.support.toypathway.kind import OPT_IN, TOY

if TYPE_CHECKING:
    from syncagent.programs.base import ProgramResult
    from syncagent.programs.context import GraphContext

MANAGER = FieldManager(name="syncagent/toy", kinds=(TOY.kind,), paths=(".spec*",))
# On where ToySets are served (``--capability toy=auto|true|false``, metric ``toy``/``toyAPI``).
CAPABILITY = Capability("toy", (TOY,), api=True)


def render_toy_set(graph: DynamoGraphDeployment) -> Rendered:
    return build(
        manager=MANAGER.name,
        api_version=TOY.api_version,
        kind=TOY.kind,
        name=graph.name,
        namespace=graph_namespace(graph),
        owner=graph_owner(graph),
        spec={"components": [c.name for c in graph.spec.components]},
    )


class ToyFunctions(PathwayFunctions):
    """What differs on the toy pathway: it takes an opted-in graph and renders one ToySet."""

    def claim(self, route: Route) -> Claim:
        wanted = opted_in(route.annotations)
        return Claim(wanted, wanted=wanted)

    def cannot_render(self, route: Route) -> str:
        return "" if opted_in(route.annotations) else f"the graph does not set {OPT_IN}"

    def dcd_components(self, components: Sequence[Component]) -> list[str] | None:
        return []

    def render(
        self, graph: DynamoGraphDeployment, *, env: Environment, caps: Capabilities
    ) -> list[Rendered]:
        return [render_toy_set(graph)]

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        from tests.support.toypathway.reconcile import reconcile

        return await reconcile(ctx)


def opted_in(annotations: Mapping[str, str]) -> bool:
    return (annotations.get(OPT_IN) or "").lower() == "true"


def toy_program(functions: PathwayFunctions | None = None) -> Program:
    """The toy pathway; ``functions``: a test's own (a failing reconcile), else the toy's."""
    return Program(
        name="toy",
        pathway="Toy",
        summary="Toy (a ToySet, tests only)",
        capability=CAPABILITY,
        owns=(TOY,),
        functions=functions or ToyFunctions(),
        watches=(Watched(TOY, write=True, requeues=(Requeue(GRAPH, CONTROLLER),)),),
        managers=(MANAGER,),
        records=(OPT_IN,),  # recorded with the pathway: its own annotation, beside Grove's
        opt_in=OPT_IN,
    )
