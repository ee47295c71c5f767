"""`syncagent/ownership`: the controller reference item on every object we own, nothing else.

The kinds below are the ones every pathway shares; each pathway's own workload kinds (its
``owns``) are added by the program registry (``Registry.field_managers``).
"""

from fieldmanagers.contract import FieldManager
from syncagent.kube import kinds

MANAGER = FieldManager(
    name="syncagent/ownership",
    kinds=(
        kinds.DCD.kind,
        "Deployment",
        "LeaderWorkerSet",
        "Service",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        kinds.SCALING_ADAPTER.kind,
    ),
    paths=(".metadata.ownerReferences*",),
)
