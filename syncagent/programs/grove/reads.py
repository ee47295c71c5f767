"""What one Grove reconcile reads before any write (docs/grove.md §2): the graph's PodCliqueSet
(refused when another owner controls the one of its name) and its cliques; and the live
``restartAt`` values the render keeps."""

from __future__ import annotations

from dataclasses import dataclass

from syncagent.api import is_multinode_component
from syncagent.kube import kinds
from syncagent.programs import migration
from syncagent.programs.context import GraphContext
from syncagent.programs.grove.pcs_readiness import GroveChild
from syncagent.programs.grove.render import child_name, pcs_name
from syncagent.programs.view import Obj
from syncagent.render import Environment, Rendered, generate_dcds
from syncagent.render import labels as L
from syncagent.ssa import owner_of

PCS = kinds.POD_CLIQUE_SET


@dataclass
class GroveLive:
    """The live PCS and cliques; ``rendered``/``applied``: the PCS once rendered and applied."""

    pcs: Obj | None
    children: list[tuple[GroveChild, Obj | None]]
    rendered: Rendered | None = None
    applied: Obj | None = None


def read_live(ctx: GraphContext, env: Environment) -> GroveLive:
    """The PCS, found through this graph's controller reference (the name follows the
    components), and its cliques."""
    mine = migration.owned(ctx.store, PCS.kind, ctx.namespace, ctx.uid)
    name = pcs_name(ctx.name, ctx.typed.spec.components)
    by_name = ctx.store.get(PCS.kind, ctx.namespace, name)
    live = mine[0] if mine else None
    if by_name is not None and by_name not in mine:
        stub = Rendered("", PCS.api_version, PCS.kind, name, ctx.namespace, body={})
        ctx.writer.check_may_control(stub, by_name, owner_of(ctx.graph))
        live = by_name
    return GroveLive(live, _children(ctx, name, env))


def _children(ctx: GraphContext, pcs: str, env: Environment) -> list[tuple[GroveChild, Obj | None]]:
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


def restart_values(pcs: Obj | None) -> dict[str, str]:
    """Component -> live ``restartAt`` from the PCS cliques, so other components do not roll."""
    out: dict[str, str] = {}
    template = ((pcs or {}).get("spec") or {}).get("template") or {}
    for clique in template.get("cliques") or ():
        annotations = clique.get("annotations") or {}
        component = (clique.get("labels") or {}).get(L.COMPONENT)
        if component and L.RESTART_AT in annotations:
            out.setdefault(str(component), str(annotations[L.RESTART_AT]))
    return out
