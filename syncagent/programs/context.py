"""What every graph program receives, and the status every pathway reports (docs/routing.md §2).

The routing parts of the status (``status.routing``, ``WorkloadPathway``, the programs' own
routing conditions) and the routing events are the same for every program, so they are
computed here from the selection and the previous status.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from syncagent.api import DynamoGraphDeployment, Restart, schemacheck, unknown
from syncagent.api.schemas import LiveChecks
from syncagent.kube.objects import Body, Meta
from syncagent.programs import routing, status
from syncagent.programs.base import NORMAL, WARNING, ProgramResult, QueuedEvent
from syncagent.programs.capabilities import Capabilities
from syncagent.programs.view import Obj, Store
from syncagent.programs.writes import Writer
from syncagent.render import AgentAccount, Infrastructure
from syncagent.ssa import PreconditionError, SsaError

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry


log = logging.getLogger(__name__)


@dataclass
class GraphContext:
    """One DGD reconcile: the live graph as read at its start, and what the program may use."""

    graph: Obj
    caps: Capabilities
    selection: routing.Selection
    recorded: routing.RecordedRouting | None
    store: Store
    writer: Writer
    discovery_backend: str = "kubernetes"
    agent_account: AgentAccount | None = None  # no pod may run as it (render/podtemplate.py)
    infrastructure: Infrastructure = field(
        default_factory=Infrastructure
    )  # the operator configuration's addresses
    now: str = field(default_factory=status.now_rfc3339)
    # The programs this agent runs: the composition root's registry, passed down.
    programs: Registry = field(kw_only=True)
    # The graph parsed once into the typed model (None when it does not parse: ``problems``
    # then says why, each ``<json path>: <message>``, docs/api.md §1). Parsed here when the
    # caller did not: every reader of the context shares the one parse.
    model: DynamoGraphDeployment | None = None
    problems: tuple[str, ...] = ()
    # The agent's (or plan's) remembered schema checks, owned where it is put together.
    checks: LiveChecks = field(default_factory=LiveChecks, kw_only=True)

    def __post_init__(self) -> None:
        if self.model is None and not self.problems:
            self.model, self.problems = parse(self.graph)

    @functools.cached_property
    def schema(self) -> schemacheck.Result:
        """The CRD schema check of the graph, made once per reconcile: validation and the
        ``UnknownFields`` condition both read it."""
        return self.checks.check(self.graph)

    @property
    def typed(self) -> DynamoGraphDeployment:
        """The parsed graph. Programs run only on a graph that parses (``run_graph`` validates
        first); anything else is a bug, named here."""
        if self.model is None:
            raise ValueError(f"{self.ref}: the graph does not parse: {'; '.join(self.problems)}")
        return self.model

    @property
    def restart(self) -> Restart | None:
        """``spec.restart`` of the parsed graph (programs run only on a graph that parses)."""
        return self.model.spec.restart if self.model is not None else None

    @property
    def meta(self) -> Meta:
        return Body(self.graph).meta

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def uid(self) -> str:
        return self.meta.uid

    @property
    def generation(self) -> int:
        return self.meta.generation

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.meta.annotations

    @property
    def previous(self) -> Mapping[str, Any]:
        return Body(self.graph).status

    @property
    def ref(self) -> str:
        return f"DynamoGraphDeployment/{self.namespace}/{self.name}"


def parse(graph: Obj) -> tuple[DynamoGraphDeployment | None, tuple[str, ...]]:
    """The graph as the typed model, or why it does not parse."""
    try:
        return DynamoGraphDeployment.model_validate(graph), ()
    except ValidationError as err:
        return None, tuple(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in err.errors()
        )


def routing_record(ctx: GraphContext, *, keep: bool = False) -> dict[str, str] | None:
    """``status.routing``: written on first routing and on a pathway change; ``keep`` leaves
    the recorded value alone (an invalid spec)."""
    previous = routing.RecordedRouting.from_status(ctx.previous.get("routing"))
    if keep:
        return previous.to_status() if previous else None
    if previous is not None and previous.pathway == ctx.selection.pathway:
        return previous.to_status()
    return ctx.selection.record(ctx.annotations).to_status()


def pathway_condition(
    ctx: GraphContext, *, stale: Sequence[str] = (), message: str | None = None
) -> tuple[str, str, str]:
    reason = ctx.selection.pathway
    if message is not None:
        return ("False", reason, message)
    if stale:
        return (
            "False",
            reason,
            f"migrating to the {reason} pathway; waiting to remove {', '.join(stale)}",
        )
    return ("True", reason, routing.pathway_message(ctx.selection))


def build_status(
    ctx: GraphContext,
    result: status.GraphResult,
    *,
    components: Mapping[str, Mapping[str, Any]] | None = None,
    restart: Mapping[str, Any] | None = None,
    checkpoints: Mapping[str, Mapping[str, Any]] | None = None,
    stale: Sequence[str] = (),
    pathway_message: str | None = None,
    keep_routing: bool = False,
) -> dict[str, Any]:
    inp = status.GraphStatusInput(
        generation=ctx.generation,
        result=result,
        routing=routing_record(ctx, keep=keep_routing),
        components=components,
        restart=restart,
        checkpoints=checkpoints,
        pathway=pathway_condition(ctx, stale=stale, message=pathway_message),
        routed=tuple(
            (c.type, c.status, c.reason, c.message) for c in ctx.programs.conditions(ctx.selection)
        ),
        unknown_fields=unknown_fields_message(ctx.schema),
    )
    return status.graph_status(inp, previous=ctx.previous, now=ctx.now)


def failed(
    ctx: GraphContext, message: str, *, refused: bool = False, conflict: bool = False
) -> ProgramResult:
    """A graph reconcile that ended in an error: ``Ready=False`` with ``message`` (the
    components keep their last reported status), the events so far, and retry with backoff.
    ``conflict``: a write's precondition no longer held (``ProgramResult.conflict``)."""
    if not conflict:
        log.warning(
            f"{ctx.ref}: reconcile failed: {message}", extra={"object": ctx.ref, "error": message}
        )
    result = status.failed(status.RECONCILE_FAILED, message)
    built = build_status(ctx, result, components=ctx.previous.get("components"))
    return ProgramResult(
        built, list(ctx.writer.events), retry=True, refused=refused, conflict=conflict
    )


def failed_write(ctx: GraphContext, err: SsaError) -> ProgramResult:
    """:func:`failed` for an engine error; a precondition that no longer held is a conflict."""
    return failed(ctx, str(err), conflict=isinstance(err, PreconditionError))


def unknown_fields_message(schema: schemacheck.Result) -> str:
    """The ``UnknownFields`` condition's message: each unknown field and its close known one."""
    return "; ".join(unknown.warnings(schema.unknown))


def status_events(
    ctx: GraphContext, new: Mapping[str, Any], *, refused: bool = False
) -> list[QueuedEvent]:
    """Events that follow from a status change (docs/lifecycle.md §4; docs/routing.md §2)."""
    events: list[QueuedEvent] = []
    old_conds = ctx.previous.get("conditions")
    new_conds = new.get("conditions")
    old_path = status.find(old_conds, status.WORKLOAD_PATHWAY)
    new_path = status.find(new_conds, status.WORKLOAD_PATHWAY)
    if old_path and new_path and old_path.get("reason") != new_path.get("reason"):
        events.append(
            QueuedEvent(
                NORMAL,
                "WorkloadPathwayChanged",
                f"Workload pathway changed from {old_path.get('reason')} to "
                f"{new_path.get('reason')}",
            )
        )
    events += _routed_events(ctx, old_conds)
    events += _ready_events(old_conds, new_conds, refused=refused)
    events += _unknown_field_events(old_conds, new_conds)
    return events


def _routed_events(ctx: GraphContext, old_conds: Any) -> list[QueuedEvent]:
    """A program's routing condition that warns: when it appears or its text changes."""
    events = []
    for cond in ctx.programs.conditions(ctx.selection):
        old = status.find(old_conds, cond.type) or {}
        if cond.warning and (old.get("reason"), old.get("message")) != (cond.reason, cond.message):
            events.append(QueuedEvent(WARNING, *cond.warning))
    return events


def _unknown_field_events(old_conds: Any, new_conds: Any) -> list[QueuedEvent]:
    old = status.find(old_conds, status.UNKNOWN_FIELDS) or {}
    new = status.find(new_conds, status.UNKNOWN_FIELDS) or {}
    if not new or old.get("message") == new.get("message"):
        return []
    return [QueuedEvent(WARNING, status.UNKNOWN_FIELDS, str(new.get("message")))]


def _ready_events(old_conds: Any, new_conds: Any, *, refused: bool) -> list[QueuedEvent]:
    old = status.find(old_conds, status.READY) or {}
    new = status.find(new_conds, status.READY) or {}
    changed = (old.get("reason"), old.get("message")) != (new.get("reason"), new.get("message"))
    if not changed:
        return []
    reason, message = new.get("reason"), str(new.get("message") or "")
    if reason == status.VALIDATION_FAILED:
        return [QueuedEvent(WARNING, "ValidationFailed", message)]
    if reason == status.RECONCILE_FAILED:
        # A refusal is reported as OwnershipConflict, never also as ReconcileError.
        return [QueuedEvent(WARNING, "OwnershipConflict" if refused else "ReconcileError", message)]
    return []
