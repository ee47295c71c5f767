"""The Grove pathway's part of a graph reconcile (docs/grove.md): one PodCliqueSet per graph.

The steps are :func:`syncagent.programs.skeleton.run`'s; here: read the PCS and its cliques,
render it, refuse a change Grove would refuse (before any write), apply it and its scale
writes; readiness from the PCS, then the Services (:mod:`.services`); retire once
``successful``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from syncagent.api import is_multinode_component
from syncagent.kube import kinds
from syncagent.programs import migration, skeleton
from syncagent.programs.base import ProgramResult
from syncagent.programs.context import GraphContext
from syncagent.programs.grove import scale, services
from syncagent.programs.grove.readiness import GroveChild, component_status, pcs_readiness
from syncagent.programs.readiness import Readiness
from syncagent.programs.routing import Pathway
from syncagent.programs.skeleton import Turn
from syncagent.programs.view import Obj
from syncagent.render import (
    Environment,
    GraphLive,
    Rendered,
    RenderError,
    generate_dcds,
)
from syncagent.render import labels as L
from syncagent.render.grove import (
    child_name,
    clique_set_change,
    live_template_replicas,
    pcs_name,
    render_pod_clique_set,
)
from syncagent.render.grove_startup import live_fixed
from syncagent.render.naming import dynamo_namespace
from syncagent.ssa import owner_of

log = logging.getLogger(__name__)

PCS = kinds.POD_CLIQUE_SET
PATHWAY = Pathway.GROVE


class _CliqueSetChanged(RenderError):
    """A PodCliqueSet change Grove would refuse: reported as a graph it cannot render."""


@dataclass
class _Live:
    pcs: Obj | None
    children: list[tuple[GroveChild, Obj | None]]
    rendered: Rendered | None = None
    applied: Obj | None = None


class GroveReconcile:
    """One reconcile of a graph routed to the Grove pathway (:func:`skeleton.run`'s steps)."""

    async def reconcile(self, ctx: GraphContext) -> ProgramResult:
        return await skeleton.run(ctx, self)

    def read(self, turn: Turn) -> _Live:
        """The PCS, found through this graph's controller reference (the name follows the
        components), and its cliques."""
        ctx = turn.ctx
        mine = migration.owned(ctx.store, PCS.kind, ctx.namespace, ctx.uid)
        name = pcs_name(ctx.name, ctx.typed.spec.components)
        by_name = ctx.store.get(PCS.kind, ctx.namespace, name)
        live = mine[0] if mine else None
        if by_name is not None and by_name not in mine:
            stub = Rendered("", PCS.api_version, PCS.kind, name, ctx.namespace, body={})
            ctx.writer.check_may_control(stub, by_name, owner_of(ctx.graph))
            live = by_name
        return _Live(live, self._children(ctx, name, turn.env))

    def plan(self, turn: Turn, live: _Live) -> None:
        turn.restart = turn.plan_restart(lambda _c: pcs_readiness(live.pcs, live.children).ready)
        restart_at = _restart_values(live.pcs)
        turn.graph_live = GraphLive(restart_at=restart_at, restarting=turn.restart.annotate)

    async def apply_root(self, turn: Turn, live: _Live) -> None:
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

    def applies_dcd(self, live: _Live, component: str) -> bool:
        return False

    async def settle(self, turn: Turn, live: _Live) -> list[tuple[str, Readiness]]:
        ready_state = pcs_readiness(live.applied, live.children)
        await services.services(turn.ctx, turn.dcds, turn.env, switch=ready_state.ready)
        return [(_name(live), ready_state)]

    async def retire(self, turn: Turn, live: _Live, *, successful: bool) -> list[str]:
        return await services.cleanup(
            turn.ctx, turn.dcds, turn.env, successful=successful, keep=_name(live)
        )

    def components(self, turn: Turn, live: _Live) -> dict[str, dict[str, Any]]:
        ctx = turn.ctx
        runtime = {
            c.name: dynamo_namespace(
                ctx.namespace, ctx.name, global_namespace=bool(c.global_dynamo_namespace)
            )
            for c in ctx.typed.spec.components
        }
        return {
            child.component: component_status(
                child, obj, runtime_namespace=runtime[child.component]
            )
            for child, obj in live.children
        }

    def _children(
        self, ctx: GraphContext, pcs: str, env: Environment
    ) -> list[tuple[GroveChild, Obj | None]]:
        sources = {d.body["spec"]["name"]: d for d in generate_dcds(ctx.typed, env=env)}
        out = []
        for component in ctx.typed.spec.components:
            spec = sources[component.name].body["spec"]
            multinode = is_multinode_component(spec)
            kind = "PodCliqueScalingGroup" if multinode else "PodClique"
            name = child_name(pcs, component.name)
            desired = 1 if spec.get("replicas") is None else int(spec["replicas"])
            child = GroveChild(component.name, kind, name, desired)
            out.append((child, ctx.store.get(kind, ctx.namespace, name)))
        return out


def _name(live: _Live) -> str:
    return live.rendered.name if live.rendered is not None else ""


def _restart_values(pcs: Obj | None) -> dict[str, str]:
    """Component -> live ``restartAt`` from the PCS cliques, so other components do not roll."""
    out: dict[str, str] = {}
    template = ((pcs or {}).get("spec") or {}).get("template") or {}
    for clique in template.get("cliques") or ():
        annotations = clique.get("annotations") or {}
        component = (clique.get("labels") or {}).get(L.COMPONENT)
        if component and L.RESTART_AT in annotations:
            out.setdefault(str(component), str(annotations[L.RESTART_AT]))
    return out


__all__ = ["GroveReconcile"]
