"""`syncagent/graph-status`: the DynamoGraphDeployment status subresource."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/graph-status",
    kinds=("DynamoGraphDeployment",),
    paths=(".status*",),
    subresource="status",
)
