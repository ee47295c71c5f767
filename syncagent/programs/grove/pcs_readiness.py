"""Readiness of a Grove PodCliqueSet and its children (docs/grove.md §2). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.kube.objects import Body
from syncagent.programs.readiness import Readiness

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class GroveChild:
    """The PodClique (single-node) or PodCliqueScalingGroup (multinode) of a component."""

    component: str
    kind: str
    name: str
    desired: int


def _int(value: Any) -> int:
    return int(value or 0)


def pcs_readiness(pcs: Obj | None, children: Sequence[tuple[GroveChild, Obj | None]]) -> Readiness:
    """Observed, available == updated == replicas, update ended, every child ready."""
    if pcs is None or Body(pcs).being_deleted:
        return Readiness(False, "not found")
    status = Body(pcs).status
    generation = Body(pcs).meta.generation
    reasons = []
    if status.get("observedGeneration") is None or _int(status["observedGeneration"]) != generation:
        reasons.append(f"status has not observed generation {generation}")
    replicas = _int(Body(pcs).spec.get("replicas"))
    available, updated = _int(status.get("availableReplicas")), _int(status.get("updatedReplicas"))
    if not available == updated == replicas:
        reasons.append(
            f"replicas not ready (desired={replicas} available={available} updated={updated})"
        )
    progress = status.get("updateProgress")
    if progress is not None and not progress.get("updateEndedAt"):
        reasons.append("update in progress")
    for child, obj in children:
        reason = child_reason(child, obj)
        if reason:
            reasons.append(reason)
    if reasons:
        return Readiness(False, "; ".join(reasons))
    return Readiness(True)


def child_reason(child: GroveChild, obj: Obj | None) -> str:
    if obj is None or Body(obj).being_deleted:
        return f"{child.kind} {child.name} not found"
    status = Body(obj).status
    field = "readyReplicas" if child.kind == "PodClique" else "availableReplicas"
    have = _int(status.get(field))
    if have < child.desired:
        return f"{child.kind} {child.name} not ready ({field}={have}, desired={child.desired})"
    return ""


def component_status(
    child: GroveChild, obj: Obj | None, *, runtime_namespace: str
) -> dict[str, Any]:
    status = Body(obj).status
    out: dict[str, Any] = {
        "componentKind": child.kind,
        "componentNames": [child.name],
        "runtimeNamespace": runtime_namespace,
        "replicas": _int(status.get("replicas")),
        "updatedReplicas": _int(status.get("updatedReplicas")),
    }
    if child.kind == "PodClique":
        out["readyReplicas"] = _int(status.get("readyReplicas"))
    else:
        out["availableReplicas"] = _int(status.get("availableReplicas"))
    return out
