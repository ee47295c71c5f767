"""Field managers: one module per concern, each naming the kinds and paths it owns.

Programs import the manager they write with; ``blame``, ``conflicts`` and ``managers`` use
:data:`ALL` to name owners and to spot stale managers.
"""

from fieldmanagers import (
    component_status,
    components,
    disaggregatedset,
    graph_status,
    grove,
    grove_scale,
    identity,
    labels,
    ownership,
    services,
    waitleader,
    workloads,
)
from fieldmanagers.contract import FieldManager
from fieldmanagers.owner import for_owner, is_owner_manager

PREFIX = "syncagent/"

ALL: tuple[FieldManager, ...] = (
    components.MANAGER,
    workloads.MANAGER,
    disaggregatedset.MANAGER,
    grove.MANAGER,
    services.MANAGER,
    ownership.MANAGER,
    identity.MANAGER,
    waitleader.MANAGER,
    grove_scale.MANAGER,
    graph_status.MANAGER,
    component_status.MANAGER,
)


def by_name(name: str) -> FieldManager | None:
    """The declaration for a manager name, including per-owner ``syncagent/owner/<uid>``."""
    if is_owner_manager(name):
        return for_owner(name.removeprefix("syncagent/owner/"))
    return next((m for m in ALL if m.name == name), None)


def is_ours(name: str) -> bool:
    return name.startswith(PREFIX)


def metric_label(name: str) -> str:
    """The bounded ``manager`` label for ``name`` (``fieldmanagers.labels``)."""
    return labels.metric_label(name, ours=ALL)


__all__ = ["ALL", "PREFIX", "FieldManager", "by_name", "for_owner", "is_ours", "metric_label"]
