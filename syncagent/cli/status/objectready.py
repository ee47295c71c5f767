"""Whether one live object is ready, in a few words, and why not (pure; ``syncagent status``).

Pods go by their ``Ready`` condition; Deployments by ready replicas of the observed generation;
everything else by its ``Ready`` condition, else its ``Available`` one (our CRDs, LeaderWorkerSets,
DisaggregatedSets and Grove's kinds report one of them). An object without either has not been
seen by its controller yet: its readiness is unknown (``None``), never assumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncagent.kube.objects import Body

Readiness = tuple[bool | None, str, str]  # ready, state, reason when not ready


def condition(obj: Mapping[str, Any], type_: str) -> Mapping[str, Any]:
    for cond in Body(obj).status.get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond
    return {}


def of(obj: Mapping[str, Any]) -> Readiness:
    body = Body(obj)
    if body.being_deleted:
        return False, "deleting", "being deleted (deletionTimestamp set)"
    if body.kind == "Pod":
        return _pod(obj)
    if body.kind == "Deployment":
        return _deployment(obj)
    if body.kind == "Service":
        return None, "", ""  # the tree decides from what its selector matches
    for type_ in ("Ready", "Available"):
        if cond := condition(obj, type_):
            return _by_condition(cond)
    return None, "no status reported yet", ""


def _by_condition(cond: Mapping[str, Any]) -> Readiness:
    ok = cond.get("status") == "True"
    name = str(cond.get("type"))
    if ok:
        return True, name, ""
    return False, f"not {name}", _why(cond)


def _why(cond: Mapping[str, Any]) -> str:
    reason, message = (
        str(cond.get("reason") or ""),
        " ".join(str(cond.get("message") or "").split()),
    )
    return (
        ": ".join(p for p in (reason, message) if p) or f"{cond.get('type')}={cond.get('status')}"
    )


def _pod(obj: Mapping[str, Any]) -> Readiness:
    phase = str(Body(obj).status.get("phase") or "Pending")
    cond = condition(obj, "Ready")
    if cond.get("status") == "True":
        return True, phase, ""
    waiting = [
        s["state"]["waiting"]
        for s in Body(obj).status.get("containerStatuses") or ()
        if isinstance(s, Mapping) and "waiting" in (s.get("state") or {})
    ]
    if waiting:
        return False, phase, _why({"type": "Ready", **waiting[0]})
    scheduled = condition(obj, "PodScheduled")
    if scheduled.get("status") == "False":
        return False, phase, _why(scheduled)
    return False, phase, _why(cond) if cond else "no Ready condition yet"


def _deployment(obj: Mapping[str, Any]) -> Readiness:
    body = Body(obj)
    want = int(body.spec.get("replicas", 1))
    ready = int(body.status.get("readyReplicas") or 0)
    updated = int(body.status.get("updatedReplicas") or 0)
    state = f"{ready}/{want} ready"
    if int(body.status.get("observedGeneration") or 0) < body.meta.generation:
        return False, state, "its controller has not observed the latest generation yet"
    if ready >= want and updated >= want:
        return True, state, ""
    for type_ in ("ReplicaFailure", "Progressing", "Available"):
        cond = condition(obj, type_)
        failing = cond.get("status") == ("True" if type_ == "ReplicaFailure" else "False")
        if failing:
            return False, state, _why(cond)
    return False, state, f"{ready} of {want} replicas ready, {updated} updated"
