"""The restart state machine (spec/lifecycle.md §2). Pure.

A new ``spec.restart.id`` starts a restart; components roll one at a time (Sequential, in
``order`` or by name) or all at once (Parallel). A component is annotated with
``nvidia.com/restartAt: <id>`` only while the restart reaches it; every other component keeps
its live value, so it does not roll again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RESTARTING = "Restarting"
COMPLETED = "Completed"
TERMINAL = frozenset({"Completed", "Failed", "Superseded"})


@dataclass(frozen=True, slots=True)
class RestartPlan:
    """``status``: the new ``status.restart`` (None = omit it); ``annotate``: the components
    whose pod template gets ``restartAt: <id>`` in this reconcile."""

    status: dict[str, Any] | None
    annotate: frozenset[str] = field(default_factory=frozenset)


def plan_restart(
    spec_restart: Mapping[str, Any] | None,
    status_restart: Mapping[str, Any] | None,
    components: Sequence[str],
    *,
    done: Callable[[str], bool],
) -> RestartPlan:
    """The next restart state; ``done(c)`` says whether component ``c`` finished rolling."""
    restart_id = str((spec_restart or {}).get("id") or "")
    current = dict(status_restart or {})
    if not restart_id:
        keep = current if current.get("phase") in TERMINAL else None
        return RestartPlan(keep or None)
    strategy = (spec_restart or {}).get("strategy") or {}
    parallel = strategy.get("type") == "Parallel"
    is_new = current.get("observedID") != restart_id
    if not is_new and current.get("phase") in TERMINAL:
        return RestartPlan(current, _annotated(current, components, strategy, parallel))
    if parallel:
        state = _parallel(restart_id, current, components, is_new=is_new, done=done)
    else:
        order = _order(strategy, components)
        state = _sequential(restart_id, current, order, is_new=is_new, done=done)
    return RestartPlan(state, _annotated(state, components, strategy, parallel))


def _order(strategy: Mapping[str, Any], components: Sequence[str]) -> list[str]:
    return list(strategy.get("order") or sorted(components))


def _status(restart_id: str, phase: str, in_progress: list[str]) -> dict[str, Any]:
    return {"observedID": restart_id, "phase": phase, "inProgress": in_progress}


def _parallel(
    restart_id: str,
    current: Mapping[str, Any],
    components: Sequence[str],
    *,
    is_new: bool,
    done: Callable[[str], bool],
) -> dict[str, Any]:
    if is_new:
        # Nothing has rolled yet: done() still describes the pods before the restart.
        return _status(restart_id, RESTARTING, sorted(components))
    remaining = [c for c in current.get("inProgress") or [] if not done(c)]
    if not remaining:
        return _status(restart_id, COMPLETED, [])
    return _status(restart_id, RESTARTING, remaining)


def _sequential(
    restart_id: str,
    current: Mapping[str, Any],
    order: list[str],
    *,
    is_new: bool,
    done: Callable[[str], bool],
) -> dict[str, Any]:
    if not order:
        return _status(restart_id, COMPLETED, [])
    if is_new:
        return _status(restart_id, RESTARTING, [order[0]])
    in_progress = list(current.get("inProgress") or [])
    cur = in_progress[0] if in_progress else order[0]
    if cur not in order:
        cur = order[0]
    if not done(cur):
        return _status(restart_id, RESTARTING, [cur])
    index = order.index(cur) + 1
    if index >= len(order):
        return _status(restart_id, COMPLETED, [])
    return _status(restart_id, RESTARTING, [order[index]])


def _annotated(
    state: Mapping[str, Any],
    components: Sequence[str],
    strategy: Mapping[str, Any],
    parallel: bool,
) -> frozenset[str]:
    if parallel or state.get("phase") == COMPLETED:
        return frozenset(components)
    if state.get("phase") != RESTARTING:
        return frozenset()
    order = _order(strategy, components)
    indexes = [order.index(c) for c in state.get("inProgress") or [] if c in order]
    if not indexes:
        return frozenset()
    return frozenset(order[: max(indexes) + 1])
