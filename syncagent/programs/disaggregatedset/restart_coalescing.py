"""Restart coalescing on the DisaggregatedSet pathway (docs/disaggregatedset.md §6). Pure.

The DS rolls every role in one revision, so a sequential restart treats the selected components
as one step: the first selected component in the order stands for all of them, annotating any
selected component annotates all, and once the DS is done the remaining selected components are
skipped. Parallel restarts are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from syncagent.api.graph import Restart, RestartStrategy
from syncagent.kube.objects import Body
from syncagent.programs.restart import RestartPlan, plan_restart, restart_order
from syncagent.render import labels as L

Obj = Mapping[str, Any]


def _collapsed_order(order: Sequence[str], selected: Sequence[str]) -> list[str]:
    out: list[str] = []
    seen_selected = False
    for name in order:
        if name in selected:
            if seen_selected:
                continue
            seen_selected = True
        out.append(name)
    return out


def plan_ds_restart(
    spec_restart: Restart | None,
    status_restart: Mapping[str, Any] | None,
    components: Sequence[str],
    *,
    selected: Sequence[str],
    done: Callable[[str], bool],
) -> RestartPlan:
    """``done(c)`` for a selected ``c`` must be the DS check (ready and not modified)."""
    if spec_restart is None or not spec_restart.id or spec_restart.strategy_type == "Parallel":
        plan = plan_restart(spec_restart, status_restart, components, done=done)
        return _coalesce(plan, selected)
    collapsed = _collapsed_order(restart_order(spec_restart, components), selected)
    first = next((c for c in collapsed if c in selected), None)
    current = dict(status_restart or {})
    in_progress = list(current.get("inProgress") or [])
    if in_progress and in_progress[0] in selected and first is not None:
        # A selected component other than the first stands for the same DS step.
        current["inProgress"] = [first]
    strategy = RestartStrategy(type=spec_restart.strategy_type, order=collapsed)
    spec = spec_restart.model_copy(update={"strategy": strategy})
    plan = plan_restart(spec, current or None, components, done=done)
    return _coalesce(plan, selected)


def _coalesce(plan: RestartPlan, selected: Sequence[str]) -> RestartPlan:
    if plan.annotate & set(selected):
        return RestartPlan(plan.status, plan.annotate | frozenset(selected))
    return plan


def restart_visible(
    ds: Obj | None, roles: Mapping[str, str], component: str, restart_id: str
) -> bool:
    """Whether the DS view carries restart ``restart_id`` for ``component``'s role (no restart:
    nothing to see). Without it the view predates the restart's write."""
    return not restart_id or restart_values_from_ds(ds, roles).get(component) == restart_id


def restart_values_from_ds(ds: Obj | None, roles: Mapping[str, str]) -> dict[str, str]:
    """Component -> live ``restartAt`` of its DS role (leader template, else worker template)."""
    if not ds:
        return {}
    by_role = {r.get("name"): r for r in (ds.get("spec") or {}).get("roles") or ()}
    out = {}
    for component, role in roles.items():
        lwt = ((by_role.get(role) or {}).get("spec") or {}).get("leaderWorkerTemplate") or {}
        for key in ("leaderTemplate", "workerTemplate"):
            annotations = Body(lwt.get(key)).meta.annotations
            if L.RESTART_AT in annotations:
                out[component] = str(annotations[L.RESTART_AT])
                break
    return out
