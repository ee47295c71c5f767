"""Field managers: one module per concern, each naming the kinds and paths it owns.

Programs import the manager they write with. :data:`COMMON` names the managers the agent writes
with whatever the pathway; a pathway declares its own in its program (``Program.managers``).
The agent's whole list is the program registry's (``Registry.field_managers``: these plus each
pathway's, the ownership manager's kinds completed with every pathway's workload kinds), and it
is passed in wherever managers are looked up: ``syncagent managers`` (:func:`by_name`) and the
metric labels (:func:`metric_label`: each of them keeps its name).
"""

from collections.abc import Iterable

from fieldmanagers import (
    component_status,
    components,
    graph_status,
    identity,
    ownership,
    scalingadapters,
    services,
    waitleader,
    workloads,
)
from fieldmanagers.contract import FieldManager
from fieldmanagers.labels import metric_label
from fieldmanagers.owner import for_owner, is_owner_manager

PREFIX = "syncagent/"

COMMON: tuple[FieldManager, ...] = (
    components.MANAGER,
    workloads.MANAGER,
    services.MANAGER,
    ownership.MANAGER,
    identity.MANAGER,
    waitleader.MANAGER,
    graph_status.MANAGER,
    component_status.MANAGER,
    scalingadapters.MANAGER,
    scalingadapters.SEED,
    scalingadapters.REPLICAS,
    scalingadapters.STATUS,
)


def by_name(name: str, *, declared: Iterable[FieldManager]) -> FieldManager | None:
    """The declaration for a manager name among ``declared``, including per-owner
    ``syncagent/owner/<uid>``."""
    if is_owner_manager(name):
        return for_owner(name.removeprefix("syncagent/owner/"))
    return next((m for m in declared if m.name == name), None)


def is_ours(name: str) -> bool:
    return name.startswith(PREFIX)


__all__ = ["COMMON", "PREFIX", "FieldManager", "by_name", "for_owner", "is_ours", "metric_label"]
