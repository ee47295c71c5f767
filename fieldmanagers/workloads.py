"""`syncagent/workloads`: the Deployment or LeaderWorkerSet rendered from a DCD."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/workloads",
    kinds=("Deployment", "LeaderWorkerSet"),
    paths=(".spec*", ".metadata.labels*", ".metadata.annotations*"),
)
