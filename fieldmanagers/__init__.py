"""Field managers: one module per concern, each naming the kinds and paths it owns.

Programs import the manager they write with. :data:`ALL` names the managers declared here (the
metric labels keep their names); ``managers`` checks objects against the program registry's
list (``Registry.field_managers``: these plus each pathway's own, the ownership manager's kinds
completed with every pathway's workload kinds).
"""

from collections.abc import Iterable

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


def by_name(name: str, *, declared: Iterable[FieldManager] = ALL) -> FieldManager | None:
    """The declaration for a manager name among ``declared``, including per-owner
    ``syncagent/owner/<uid>``."""
    if is_owner_manager(name):
        return for_owner(name.removeprefix("syncagent/owner/"))
    return next((m for m in declared if m.name == name), None)


def is_ours(name: str) -> bool:
    return name.startswith(PREFIX)


def metric_label(name: str) -> str:
    """The bounded ``manager`` label for ``name`` (``fieldmanagers.labels``)."""
    return labels.metric_label(name, ours=ALL)


__all__ = ["ALL", "PREFIX", "FieldManager", "by_name", "for_owner", "is_ours", "metric_label"]
