"""The Grove program's declaration (docs/grove.md, docs/routing.md §2): one PodCliqueSet per graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from syncagent.api import Component, DynamoGraphDeployment
from syncagent.kube import kinds
from syncagent.programs.capabilities import Capabilities, Capability
from syncagent.programs.grove import field_managers, scale_field_manager
from syncagent.programs.grove.render import render_grove_graph
from syncagent.programs.grove.routing import ENABLE_GROVE, HELD_BACK, PATHWAY
from syncagent.programs.program import (
    CONTROLLER,
    GRAPH,
    NAMESPACE,
    Claim,
    PathwayFunctions,
    Program,
    Requeue,
    Route,
    Watched,
)
from syncagent.render import Environment, Rendered

if TYPE_CHECKING:
    from syncagent.programs.base import ProgramResult
    from syncagent.programs.context import GraphContext


# On where Grove is served; ``groveAPI``: stale PodCliqueSets are found even when it is off.
CAPABILITY = Capability("grove", (kinds.POD_CLIQUE_SET,), api=True)


class GroveFunctions(PathwayFunctions):
    """What differs on the Grove pathway: its claim, its renderer and its reconcile."""

    def claim(self, route: Route) -> Claim:
        """Grove unless opted out, or the routed-graph exception holds it back (docs/routing.md §2):
        a graph recorded on another pathway stays there until its grove annotation changes.
        Asked only while the ``grove`` capability is on (``Registry.select``)."""
        value = route.annotations.get(ENABLE_GROVE)
        allowed = (value or "").lower() != "false"
        recorded = route.recorded
        held = (
            allowed
            and recorded is not None
            and recorded.pathway != PATHWAY
            and value == recorded.annotations.get(ENABLE_GROVE)
        )
        return Claim(allowed and not held, held_back=held, note=HELD_BACK)

    def dcd_components(self, components: Sequence[Component]) -> list[str] | None:
        return []

    def render(
        self, graph: DynamoGraphDeployment, *, env: Environment, caps: Capabilities
    ) -> list[Rendered]:
        return render_grove_graph(graph, env=env)

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        # Imported here: declaring the program (render, --help) needs none of its reconcile.
        from syncagent.programs.grove.reconcile import GroveReconcile

        return await GroveReconcile().reconcile(ctx)


def grove_program() -> Program:
    """The default pathway wherever Grove is served."""
    return Program(
        name="grove",
        pathway=PATHWAY,
        summary="Grove (a PodCliqueSet)",
        capability=CAPABILITY,
        owns=(kinds.POD_CLIQUE_SET,),
        functions=GroveFunctions(),
        # PodCliqueSet -> its controlling DGD; PodClique and PodCliqueScalingGroup (owned by
        # the PCS) -> every DGD of their namespace (docs/grove.md §2).
        watches=(
            Watched(kinds.POD_CLIQUE_SET, write=True, requeues=(Requeue(GRAPH, CONTROLLER),)),
            Watched(kinds.POD_CLIQUE, requeues=(Requeue(GRAPH, NAMESPACE),)),
            Watched(kinds.POD_CLIQUE_SCALING_GROUP, requeues=(Requeue(GRAPH, NAMESPACE),)),
        ),
        managers=(field_managers.MANAGER, scale_field_manager.MANAGER),
        records=(ENABLE_GROVE,),  # the routed-graph exception compares it (claim)
        opt_in=ENABLE_GROVE,
    )
