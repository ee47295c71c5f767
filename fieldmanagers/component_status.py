"""`syncagent/component-status`: the DynamoComponentDeployment status subresource."""

from fieldmanagers.contract import FieldManager
from syncagent.kube import kinds

MANAGER = FieldManager(
    name="syncagent/component-status",
    kinds=(kinds.DCD.kind,),
    paths=(".status*",),
    subresource="status",
)
