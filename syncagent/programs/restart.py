"""The restart state machine (docs/lifecycle.md §2). Pure.

A new ``spec.restart.id`` starts a restart; components roll one at a time (Sequential, in
``order`` or by name) or all at once (Parallel). A component is annotated with
``nvidia.com/restartAt: <id>`` only while the restart reaches it; every other component keeps
its live value, so it does not roll again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from syncagent.api.graph import Restart

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
    spec_restart: Restart | None,
    status_restart: Mapping[str, Any] | None,
    components: Sequence[str],
    *,
    done: Callable[[str], bool],
) -> RestartPlan:
    """The next restart state; ``done(c)`` says whether component ``c`` finished rolling."""
    current = dict(status_restart or {})
    if spec_restart is None or not spec_restart.id:
        keep = current if current.get("phase") in TERMINAL else None
        return RestartPlan(keep or None)
    restart_id = spec_restart.id
    parallel = spec_restart.strategy_type == "Parallel"
    is_new = current.get("observedID") != restart_id
    if not is_new and current.get("phase") in TERMINAL:
        return RestartPlan(current, _annotated(current, components, spec_restart, parallel))
    if parallel:
        state = _parallel(restart_id, current, components, is_new=is_new, done=done)
    else:
        order = restart_order(spec_restart, components)
        state = _sequential(restart_id, current, order, is_new=is_new, done=done)
    return RestartPlan(state, _annotated(state, components, spec_restart, parallel))


def restart_order(restart: Restart, components: Sequence[str]) -> list[str]:
    """The sequential order: ``strategy.order``, else the component names in byte order."""
    order = restart.strategy.order if restart.strategy is not None else None
    return list(order or sorted(components))


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
    restart: Restart,
    parallel: bool,
) -> frozenset[str]:
    if parallel or state.get("phase") == COMPLETED:
        return frozenset(components)
    if state.get("phase") != RESTARTING:
        return frozenset()
    order = restart_order(restart, components)
    indexes = [order.index(c) for c in state.get("inProgress") or [] if c in order]
    if not indexes:
        return frozenset()
    return frozenset(order[: max(indexes) + 1])
