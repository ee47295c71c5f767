"""DGD and DCD status computation (docs/lifecycle.md §1, §3; docs/api.md §2). Pure.

Statuses are wire-form dicts, computed whole, compared with the live status, and written once.
A condition's ``lastTransitionTime`` moves only when its ``status`` changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from syncagent.kube.objects import Body
from syncagent.programs.readiness import Readiness

SUCCESSFUL = "successful"
PENDING = "pending"
FAILED = "failed"

ALL_READY = "all_resources_are_ready"
NOT_READY = "some_resources_are_not_ready"
WAITING_FOR_CHECKPOINT = "waiting_for_checkpoint"
VALIDATION_FAILED = "validation_failed"
NO_ORCHESTRATOR = "no_multinode_orchestrator_available"
RECONCILE_FAILED = "failed_to_reconcile_the_resources"
PATHWAY_NOT_IMPLEMENTED = "pathway_not_implemented"

READY = "Ready"
WORKLOAD_PATHWAY = "WorkloadPathway"
AVAILABLE = "Available"
COMPONENT_READY = "DynamoComponentReady"
UNKNOWN_FIELDS = "UnknownFields"
FIELDS_IGNORED = "FieldsIgnored"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class GraphResult:
    """The outcome of one DGD reconcile: state, Ready reason and message."""

    state: str
    reason: str
    message: str

    @property
    def ready(self) -> bool:
        return self.state == SUCCESSFUL


def failed(reason: str, message: str) -> GraphResult:
    return GraphResult(FAILED, reason, message)


def result_of(
    resources: Sequence[tuple[str, Readiness]],
    *,
    waiting_checkpoints: Sequence[tuple[str, str]] = (),
) -> GraphResult:
    """Steps 1-3 of docs/lifecycle.md §1: all ready, else the not-ready list, then checkpoints."""
    not_ready = [
        (name, r) for name, r in sorted(resources, key=lambda item: item[0]) if not r.ready
    ]
    if not_ready:
        listed = "; ".join(f"{name}: {r.reason}" for name, r in not_ready)
        result = GraphResult(PENDING, NOT_READY, f"Resources not ready: {listed}")
    else:
        result = GraphResult(SUCCESSFUL, ALL_READY, "All resources are ready")
    if waiting_checkpoints:
        listed = ", ".join(f"{c} ({ck})" for c, ck in sorted(waiting_checkpoints))
        result = GraphResult(PENDING, WAITING_FOR_CHECKPOINT, f"Waiting for checkpoints: {listed}")
    return result


def condition(
    type_: str,
    status: str,
    reason: str,
    message: str,
    *,
    observed_generation: int | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_, "status": status, "reason": reason, "message": message}
    if observed_generation is not None:
        out["observedGeneration"] = observed_generation
    return out


def with_transition_times(
    conditions: Iterable[Mapping[str, Any]],
    previous: Iterable[Mapping[str, Any]] | None,
    *,
    now: str,
) -> list[dict[str, Any]]:
    """Each condition with ``lastTransitionTime``: kept while its status is unchanged."""
    before = {c.get("type"): c for c in previous or ()}
    out = []
    for cond in conditions:
        old = before.get(cond["type"])
        keep = old is not None and old.get("status") == cond["status"]
        stamp = old.get("lastTransitionTime") if keep and old else None
        out.append({**cond, "lastTransitionTime": stamp or now})
    return out


def find(conditions: Iterable[Mapping[str, Any]] | None, type_: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions or () if c.get("type") == type_), None)


@dataclass(frozen=True, slots=True)
class GraphStatusInput:
    """Everything a DGD status is made of, besides the previous status."""

    generation: int
    result: GraphResult
    routing: Mapping[str, str] | None
    components: Mapping[str, Mapping[str, Any]] | None = None
    restart: Mapping[str, Any] | None = None
    checkpoints: Mapping[str, Mapping[str, Any]] | None = None
    pathway: tuple[str, str, str] | None = None  # (status, reason, message) of WorkloadPathway
    # (type, status, reason, message) of the conditions the programs report about the routing
    routed: tuple[tuple[str, str, str, str], ...] = ()
    unknown_fields: str = ""  # the message of the UnknownFields condition (empty: none)


def graph_status(
    inp: GraphStatusInput, *, previous: Mapping[str, Any] | None, now: str
) -> dict[str, Any]:
    """The whole DGD ``status`` (docs/api.md §2)."""
    previous = previous or {}
    conds = [
        condition(
            READY,
            "True" if inp.result.ready else "False",
            inp.result.reason,
            inp.result.message,
            observed_generation=inp.generation,
        )
    ]
    if inp.pathway is not None:
        conds.append(condition(WORKLOAD_PATHWAY, *inp.pathway))
    conds += [condition(*routed) for routed in inp.routed]
    if inp.unknown_fields:
        conds.append(condition(UNKNOWN_FIELDS, "True", FIELDS_IGNORED, inp.unknown_fields))
    status: dict[str, Any] = {
        "observedGeneration": inp.generation,
        "state": inp.result.state,
        "conditions": with_transition_times(conds, previous.get("conditions"), now=now),
    }
    if inp.components is not None:
        status["components"] = {k: dict(v) for k, v in inp.components.items()}
    if inp.restart:
        status["restart"] = dict(inp.restart)
    if inp.checkpoints:
        status["checkpoints"] = {k: dict(v) for k, v in inp.checkpoints.items()}
    if inp.routing:
        status["routing"] = dict(inp.routing)
    return status


def replica_status(
    kind: str, name: str, workload: Mapping[str, Any] | None, *, runtime_namespace: str
) -> dict[str, Any]:
    """``ComponentReplicaStatus`` from a workload's status (zeros when it does not exist)."""
    st = Body(workload).status
    out: dict[str, Any] = {
        "componentKind": kind,
        "componentNames": [name],
        "runtimeNamespace": runtime_namespace,
        "replicas": int(st.get("replicas") or 0),
        "updatedReplicas": int(st.get("updatedReplicas") or 0),
        "readyReplicas": int(st.get("readyReplicas") or 0),
    }
    if kind == "Deployment":
        out["availableReplicas"] = int(st.get("availableReplicas") or 0)
    return out


@dataclass(frozen=True, slots=True)
class ComponentStatusInput:
    """What a DCD status is made of. ``error`` set means the reconcile failed."""

    generation: int
    kind: str = "Deployment"
    ready: bool = False
    message: str = ""
    component: Mapping[str, Any] | None = None
    error: str = ""
    error_reason: str = "Reconciling"


def component_status(
    inp: ComponentStatusInput, *, previous: Mapping[str, Any] | None, now: str
) -> dict[str, Any]:
    """The whole DCD ``status`` (docs/lifecycle.md §3)."""
    previous = previous or {}
    if inp.error:
        message = f"Failed to reconcile DynamoComponentDeployment: {inp.error}"
        conds = [
            condition(AVAILABLE, "False", inp.error_reason, message),
            condition(COMPONENT_READY, "False", "ComponentNotReady", message),
        ]
    else:
        status = "True" if inp.ready else "False"
        suffix = "Ready" if inp.ready else "NotReady"
        conds = [
            condition(AVAILABLE, status, f"{inp.kind}{suffix}", inp.message),
            condition(COMPONENT_READY, status, f"Component{suffix}", inp.message),
        ]
    out: dict[str, Any] = {
        "observedGeneration": inp.generation,
        "conditions": with_transition_times(conds, previous.get("conditions"), now=now),
    }
    if inp.component is not None:
        out["component"] = dict(inp.component)
    elif previous.get("component"):
        out["component"] = dict(previous["component"])
    return out


def status_equal(desired: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    """Whether writing ``desired`` would change the live status (conditions keyed by type)."""
    live = live or {}
    if set(desired) != set(live):
        return False
    for key, value in desired.items():
        if key == "conditions":
            mine = {c["type"]: dict(c) for c in value}
            theirs = {c.get("type"): dict(c) for c in live.get(key) or ()}
            if mine != theirs:
                return False
        elif value != live.get(key):
            return False
    return True


# Conditions whose message reports progress (which resources are not ready yet, and their
# counts); the components' replica counts and workload names (a rollout's) report it too.
PROGRESS_CONDITIONS = frozenset({READY, WORKLOAD_PATHWAY})
_PROGRESS_FIELDS = frozenset(
    {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "componentNames"}
)


def progress_only(desired: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    """Whether a pending graph status ``desired`` differs from the live one only in progress:
    the messages of ``Ready`` and ``WorkloadPathway``, the components' replica counts and
    workload names; state, generation, routing and every condition's status and reason the
    same (docs/lifecycle.md §1, "Status writes")."""
    live = live or {}
    if desired.get("state") != PENDING or status_equal(desired, live):
        return False
    return _reported(desired) == _reported(live)


def progress_hold(
    desired: Mapping[str, Any],
    live: Mapping[str, Any] | None,
    *,
    written_at: float | None,
    now: float,
    interval: float,
) -> float | None:
    """How long to hold back writing ``desired`` (None: write it now): a status that reports
    only progress waits until ``interval`` after the last write of that status
    (``written_at``, None when this agent has not written it)."""
    if written_at is None:
        return None
    left = written_at + interval - now
    if left <= 0 or not progress_only(desired, live):
        return None
    return left


def _reported(st: Mapping[str, Any]) -> tuple[Any, ...]:
    conditions = {
        c.get("type"): {
            k: v
            for k, v in c.items()
            if not (k == "message" and c.get("type") in PROGRESS_CONDITIONS)
        }
        for c in st.get("conditions") or ()
    }
    components = {
        name: {k: v for k, v in (c or {}).items() if k not in _PROGRESS_FIELDS}
        for name, c in (st.get("components") or {}).items()
    }
    rest = {k: v for k, v in st.items() if k not in ("conditions", "components")}
    return rest, conditions, components
