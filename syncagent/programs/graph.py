"""One DGD reconcile without its side effects on the graph: route, validate, run the program.

The agent's DGD reconciler (``syncagent.controller``) and ``syncagent plan`` share this: the
reconciler then persists the status once and emits the events; plan reports what the program
would write. Nothing here writes the graph.
"""

from __future__ import annotations

import logging

from syncagent.api import validate_graph
from syncagent.api.schemas import LiveChecks
from syncagent.kube import controlled_by
from syncagent.kube.objects import Body
from syncagent.programs import routing, status
from syncagent.programs.base import ProgramResult, QueuedEvent
from syncagent.programs.capabilities import Capabilities
from syncagent.programs.context import (
    GraphContext,
    build_status,
    failed,
    failed_write,
    status_events,
)
from syncagent.programs.program import Route
from syncagent.programs.registry import Registry
from syncagent.programs.view import Obj, Store
from syncagent.programs.writes import RefusedError, Writer
from syncagent.render import NO_INFRASTRUCTURE, AgentAccount, Infrastructure, RenderError
from syncagent.ssa import SsaError

log = logging.getLogger(__name__)


def graph_context(
    graph: Obj,
    caps: Capabilities,
    *,
    store: Store,
    writer: Writer,
    discovery_backend: str,
    programs: Registry,
    agent_account: AgentAccount | None = None,
    checks: LiveChecks | None = None,
    infrastructure: Infrastructure = NO_INFRASTRUCTURE,
) -> GraphContext:
    """The routed context of one reconcile of ``graph`` (as read at its start); ``checks``:
    the caller's remembered schema checks (None: a fresh set)."""
    recorded, selection = route(graph, caps, store=store, programs=programs)
    return GraphContext(
        graph=graph,
        caps=caps,
        selection=selection,
        recorded=recorded,
        store=store,
        writer=writer,
        discovery_backend=discovery_backend,
        agent_account=agent_account,
        infrastructure=infrastructure,
        programs=programs,
        checks=LiveChecks() if checks is None else checks,
    )


def route(
    graph: Obj, caps: Capabilities, *, store: Store, programs: Registry
) -> tuple[routing.RecordedRouting | None, routing.Selection]:
    """The pathway recorded for ``graph`` (its status, else its workloads) and the one it is
    routed to now (docs/routing.md §2)."""
    meta = Body(graph).meta
    annotations = meta.annotations
    components = list((graph.get("spec") or {}).get("components") or [])
    recorded = routing.RecordedRouting.from_status(Body(graph).status.get("routing"))
    if recorded is None:
        uid, ns = meta.uid, meta.namespace
        owned = [
            kind
            for kind in programs.owned_kinds()
            if any(controlled_by(o, uid) for o in store.list(kind.kind, ns, owner=uid))
        ]
        recorded = programs.recorded_from_children(annotations, owned)
    return recorded, programs.select(Route(annotations, components, caps, recorded))


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
    return await reconcile(ctx)


def finished_events(ctx: GraphContext, outcome: ProgramResult) -> list[QueuedEvent]:
    """The events a finished reconcile emits once its status is persisted, the agent's and
    ``plan``'s alike: the program's own (its writes), then those its status change implies
    (docs/lifecycle.md §4; docs/routing.md §2)."""
    return outcome.events + status_events(ctx, outcome.status, refused=outcome.refused)


async def reconcile(ctx: GraphContext) -> ProgramResult:
    """Run the routed program; its errors become the graph's status here, for every pathway: a
    refusal (``OwnershipConflict``), a graph it cannot render, an engine error (a precondition
    that no longer held is a conflict). Anything else is a bug and propagates."""
    try:
        return await ctx.programs.by_pathway(ctx.selection.pathway).functions.reconcile(ctx)
    except RefusedError as err:
        return failed(ctx, err.message, refused=True)
    except RenderError as err:
        return failed(ctx, err.message)
    except SsaError as err:
        return failed_write(ctx, err)


def validation_problems(ctx: GraphContext) -> list[str]:
    """Validation problems, each ``<json path>: <message>`` (docs/api.md §1).

    The API server has checked the CRD schema already, but a graph stored under an older or
    hand-edited CRD may not fit it; the same structural check keeps such a graph from reaching
    the renderers.
    """
    found = ctx.schema.errors
    if found:
        return [str(f) for f in found]
    model = ctx.model
    if model is None:
        return list(ctx.problems)
    program = ctx.programs.by_pathway(ctx.selection.pathway)
    dcd_components = program.functions.dcd_components(model.spec.components)
    problems = validate_graph(model, namespace=ctx.namespace, dcd_components=dcd_components)
    return [str(p) for p in problems]
