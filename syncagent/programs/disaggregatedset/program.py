"""The DisaggregatedSet program's declaration (docs/disaggregatedset.md, docs/routing.md §2).

Opt-in (``nvidia.com/enable-disaggregatedset: "true"``); one DS holds every eligible multinode
worker component as a role, every other component stays a DynamoComponentDeployment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from syncagent.api import Component, DynamoGraphDeployment
from syncagent.kube import kinds
from syncagent.programs.capabilities import LWS, Capabilities, Capability
from syncagent.programs.disaggregatedset import field_managers, routing
from syncagent.programs.disaggregatedset.render import render_ds_graph, selected_components
from syncagent.programs.disaggregatedset.template_hashes import TemplateHashes
from syncagent.programs.disaggregatedset.watches import ds_child_key
from syncagent.programs.program import (
    CONTROLLER,
    GRAPH,
    Claim,
    Condition,
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
    from syncagent.programs.routing import Selection


# Its roles are LeaderWorkerSet templates: it needs them served and ``lws`` on.
CAPABILITY = Capability(
    "disaggregatedSet",
    (kinds.DISAGGREGATED_SET, kinds.LEADER_WORKER_SET),
    needs=(LWS,),
    api=True,
)


class DisaggregatedSetFunctions(PathwayFunctions):
    """Takes a graph that asks for it and is eligible; otherwise the next program does.

    It owns its remembered template hashes (``F``), so they live as long as the registry the
    composition root builds, not as module state."""

    def __init__(self) -> None:
        self._hashes = TemplateHashes()

    def claim(self, route: Route) -> Claim:
        if (route.annotations.get(routing.ENABLE_DS) or "").lower() != "true":
            return Claim(False)
        reason = routing.ds_ineligibility(route.components)
        return Claim(not reason, wanted=True, reason=reason)

    def conditions(self, selection: Selection) -> tuple[Condition, ...]:
        condition = routing.eligible_condition(selection)
        return () if condition is None else (condition,)

    def cannot_render(self, route: Route) -> str:
        return routing.ds_ineligibility(route.components)

    def dcd_components(self, components: Sequence[Component]) -> list[str] | None:
        """The non-selected components (validation rule V16 applies only to those)."""
        selected = {c.name for c in selected_components(components)}
        return [c.name for c in components if c.name not in selected]

    def render(
        self, graph: DynamoGraphDeployment, *, env: Environment, caps: Capabilities
    ) -> list[Rendered]:
        return render_ds_graph(graph, env=env)

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        # Imported here: declaring the program (render, --help) needs none of its reconcile.
        from syncagent.programs.disaggregatedset.reconcile import DsReconcile

        return await DsReconcile(self._hashes).reconcile(ctx)


def disaggregatedset_program() -> Program:
    """The DisaggregatedSet pathway, with template hashes of its own (one per registry)."""
    return Program(
        name="disaggregatedset",
        pathway=routing.PATHWAY,
        summary=(
            "DisaggregatedSet (a DisaggregatedSet plus DynamoComponentDeployments for the other "
            "components)"
        ),
        capability=CAPABILITY,
        owns=(kinds.DISAGGREGATED_SET, kinds.DCD),
        functions=DisaggregatedSetFunctions(),
        # DisaggregatedSet -> its controlling DGD; LeaderWorkerSet -> its controller DS (name
        # and UID verified) -> that DS's DGD (docs/disaggregatedset.md §6). LeaderWorkerSets of
        # a DS carry no component label: watch them all (labels ignored).
        watches=(
            Watched(kinds.DISAGGREGATED_SET, write=True, requeues=(Requeue(GRAPH, CONTROLLER),)),
            Watched(kinds.LEADER_WORKER_SET, requeues=(Requeue(GRAPH, ds_child_key),)),
        ),
        managers=(field_managers.MANAGER,),
        opt_in=routing.ENABLE_DS,
    )
