"""One DGD reconcile without its side effects on the graph: route, validate, run the program.

The agent's DGD reconciler (``syncagent.controller``) and ``syncagent plan`` share this: the
reconciler then persists the status once and emits the events; plan reports what the program
would write. Nothing here writes the graph.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from syncagent.api import DynamoGraphDeployment, validate_graph
from syncagent.api.schemas import check_schema
from syncagent.programs import routing, status
from syncagent.programs.base import ProgramResult
from syncagent.programs.capabilities import Capabilities
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.dispatch import dcd_component_names, run_program
from syncagent.programs.view import Obj, Store, controlled_by
from syncagent.programs.writes import Writer

log = logging.getLogger(__name__)

DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"


def graph_context(
    graph: Obj, caps: Capabilities, *, store: Store, writer: Writer, discovery_backend: str
) -> GraphContext:
    """The routed context of one reconcile of ``graph`` (as read at its start)."""
    meta = graph.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    components = list((graph.get("spec") or {}).get("components") or [])
    recorded = routing.RecordedRouting.from_status((graph.get("status") or {}).get("routing"))
    if recorded is None:
        uid, ns = str(meta.get("uid")), str(meta.get("namespace"))
        owns = {
            kind: any(controlled_by(o, uid) for o in store.list(kind, ns))
            for kind in (DCD, "PodCliqueSet", "DisaggregatedSet")
        }
        recorded = routing.recorded_from_children(
            annotations,
            pcs=owns["PodCliqueSet"],
            ds=owns["DisaggregatedSet"],
            dcds=owns[DCD],
        )
    selection = routing.select_pathway(
        annotations,
        caps,
        recorded=recorded,
        ds_reason=lambda: routing.ds_ineligibility(components, caps),
    )
    return GraphContext(
        graph=graph,
        caps=caps,
        selection=selection,
        recorded=recorded,
        store=store,
        writer=writer,
        discovery_backend=discovery_backend,
    )


async def run_graph(ctx: GraphContext) -> ProgramResult:
    """Validate the graph, then run the program it is routed to (a failed validation runs none)."""
    problems = validation_problems(ctx)
    if problems:
        for problem in problems:
            log.warning(
                f"{ctx.ref}: {problem}",
                extra={"object": ctx.ref, "field": problem.split(":")[0]},
            )
        message = "; ".join(problems)
        result = status.failed(status.VALIDATION_FAILED, message)
        previous = ctx.previous.get("components")
        return ProgramResult(build_status(ctx, result, components=previous, keep_routing=True))
    return await run_program(ctx)


def validation_problems(ctx: GraphContext) -> list[str]:
    """Validation problems, each ``<json path>: <message>`` (api.md §1.4).

    The API server has checked the CRD schema already, but a graph stored under an older or
    hand-edited CRD may not fit it; the same structural check keeps such a graph from reaching
    the renderers.
    """
    found = check_schema(dict(ctx.graph)).errors
    if found:
        return [str(f) for f in found]
    try:
        model = DynamoGraphDeployment.model_validate(ctx.graph)
    except ValidationError as err:
        return [
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in err.errors()
        ]
    dcd_components = dcd_component_names(ctx)
    problems = validate_graph(model, namespace=ctx.namespace, dcd_components=dcd_components)
    return [str(p) for p in problems]
