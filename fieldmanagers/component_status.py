"""`syncagent/component-status`: the DynamoComponentDeployment status subresource."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/component-status",
    kinds=("DynamoComponentDeployment",),
    paths=(".status*",),
    subresource="status",
)
