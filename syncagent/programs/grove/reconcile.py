"""The Grove pathway's part of a graph reconcile (docs/grove.md): one PodCliqueSet per graph.

The steps are :func:`syncagent.programs.skeleton.run`'s; here: read the PCS and its cliques,
render it, refuse a change Grove would refuse (before any write), apply it and its scale
writes; readiness from the PCS, then the Services (:mod:`.services`); retire once
``successful``.
"""

from __future__ import annotations

from typing import Any

from syncagent.programs import skeleton
from syncagent.programs.base import ProgramResult
from syncagent.programs.context import GraphContext
from syncagent.programs.grove import pcs_services, scale
from syncagent.programs.grove.pcs_readiness import component_status, pcs_readiness
from syncagent.programs.grove.reads import GroveLive, read_live, restart_values
from syncagent.programs.grove.render import (
    clique_set_change,
    live_template_replicas,
    render_pod_clique_set,
)
from syncagent.programs.grove.startup import live_fixed
from syncagent.programs.readiness import Readiness
from syncagent.programs.skeleton import Turn
from syncagent.render import (
    GraphLive,
    RenderError,
)
from syncagent.ssa import owner_of


class _CliqueSetChanged(RenderError):
    """A PodCliqueSet change Grove would refuse: reported as a graph it cannot render."""


class GroveReconcile:
    """One reconcile of a graph routed to the Grove pathway (:func:`skeleton.run`'s steps)."""

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        return await skeleton.run(ctx, self)

    def read(self, turn: Turn) -> GroveLive:
        return read_live(turn.ctx, turn.env)

    def plan(self, turn: Turn, live: GroveLive) -> None:
        turn.restart = turn.plan_restart(lambda _c: pcs_readiness(live.pcs, live.children).ready)
        restart_at = restart_values(live.pcs)
        turn.graph_live = GraphLive(restart_at=restart_at, restarting=turn.restart.annotate)

    async def apply_root(self, turn: Turn, live: GroveLive) -> None:
        """The PodCliqueSet (after the check Grove's webhook would make), then scale writes."""
        ctx = turn.ctx
        live.rendered = render_pod_clique_set(
            ctx.typed,
            env=turn.env,
            live=turn.graph_live,
            live_replicas=live_template_replicas(live.pcs),
            fixed=live_fixed(live.pcs),
        )
        refusal = clique_set_change(live.rendered, live.pcs)
        if refusal:
            raise _CliqueSetChanged(refusal)
        owner = owner_of(ctx.graph)
        live.applied = (
            await ctx.writer.apply_owned(live.rendered, owner=owner, live=live.pcs)
        ).object
        for child, obj in live.children:
            if scale.needs_scale(obj, child.desired):
                await scale.patch_scale(ctx.writer, obj or {}, child.desired)

    def applies_dcd(self, live: GroveLive, component: str) -> bool:
        return False

    async def settle(self, turn: Turn, live: GroveLive) -> list[tuple[str, Readiness]]:
        ready_state = pcs_readiness(live.applied, live.children)
        await pcs_services.services(turn.ctx, turn.dcds, turn.env, switch=ready_state.ready)
        return [(_name(live), ready_state)]

    async def retire(self, turn: Turn, live: GroveLive, *, successful: bool) -> list[str]:
        return await pcs_services.cleanup(
            turn.ctx, turn.dcds, turn.env, successful=successful, keep=_name(live)
        )

    def components(self, turn: Turn, live: GroveLive) -> dict[str, dict[str, Any]]:
        runtime = {c.name: turn.dynamo_namespace(c) for c in turn.ctx.typed.spec.components}
        return {
            child.component: component_status(
                child, obj, runtime_namespace=runtime[child.component]
            )
            for child, obj in live.children
        }


def _name(live: GroveLive) -> str:
    return live.rendered.name if live.rendered is not None else ""


__all__ = ["GroveReconcile"]
