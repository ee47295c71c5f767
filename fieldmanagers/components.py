"""`syncagent/components`: the DynamoComponentDeployments generated from a graph."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/components",
    kinds=("DynamoComponentDeployment",),
    paths=(".spec*", ".metadata.labels*", ".metadata.annotations*"),
)
