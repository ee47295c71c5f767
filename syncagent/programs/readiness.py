"""Readiness of workloads and DCDs (docs/lifecycle.md §3). Pure: reads wire-form dicts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syncagent.kube.objects import Body

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether something is ready and, when not, why (the text the DGD message lists)."""

    ready: bool
    reason: str = ""


def _condition(obj: Obj, type_: str) -> Mapping[str, Any] | None:
    for cond in Body(obj).status.get("conditions") or ():
        if cond.get("type") == type_:
            return cond
    return None


def condition_true(obj: Obj, type_: str) -> bool:
    cond = _condition(obj, type_)
    return cond is not None and cond.get("status") == "True"


def _desired(obj: Obj) -> int:
    value = Body(obj).spec.get("replicas")
    return 1 if value is None else int(value)


def _observed_current(obj: Obj) -> bool:
    status = Body(obj).status
    generation = Body(obj).meta.generation
    return int(status.get("observedGeneration") or 0) >= generation


def deployment_ready(deployment: Obj) -> bool:
    """Not paused, and desired 0 or fully rolled out and Available (docs/lifecycle.md §3)."""
    spec = Body(deployment).spec
    if spec.get("paused"):
        return False
    desired = _desired(deployment)
    if desired == 0:
        return True
    status = Body(deployment).status
    return (
        _observed_current(deployment)
        and int(status.get("updatedReplicas") or 0) >= desired
        and int(status.get("availableReplicas") or 0) >= desired
        and int(status.get("replicas") or 0) == desired
        and condition_true(deployment, "Available")
    )


def leader_worker_set_ready(lws: Obj) -> bool:
    """Desired 0, or observedGeneration current, enough ready groups and Available."""
    desired = _desired(lws)
    if desired == 0:
        return True
    status = Body(lws).status
    return (
        _observed_current(lws)
        and int(status.get("readyReplicas") or 0) >= desired
        and condition_true(lws, "Available")
    )


def workload_ready(kind: str, workload: Obj | None) -> bool:
    """A missing workload or one being deleted is not ready."""
    if workload is None or Body(workload).being_deleted:
        return False
    if kind == "Deployment":
        return deployment_ready(workload)
    return leader_worker_set_ready(workload)


def dcd_readiness(dcd: Obj | None) -> Readiness:
    """A DCD as the DGD sees it: observed its generation and ``Available=True``."""
    if dcd is None:
        return Readiness(False, "not found")
    view = Body(dcd)
    if view.being_deleted:
        return Readiness(False, "is being deleted")
    generation = view.meta.generation
    if not _observed_current(dcd):
        return Readiness(False, f"status has not observed generation {generation}")
    available = _condition(dcd, "Available")
    if available is not None and available.get("status") == "True":
        return Readiness(True)
    message = (available or {}).get("message") or "Available condition is not True"
    return Readiness(False, str(message))


def dcd_done(dcd: Obj | None) -> bool:
    """Restart ``done(c)`` on the Component pathway (docs/lifecycle.md §2)."""
    return dcd_readiness(dcd).ready
