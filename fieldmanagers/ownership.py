"""`syncagent/ownership`: the controller reference item on every object we own, nothing else."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/ownership",
    kinds=(
        "DynamoComponentDeployment",
        "Deployment",
        "LeaderWorkerSet",
        "DisaggregatedSet",
        "PodCliqueSet",
        "Service",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    ),
    paths=(".metadata.ownerReferences*",),
)
