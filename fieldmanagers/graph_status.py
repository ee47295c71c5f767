"""`syncagent/graph-status`: the DynamoGraphDeployment status subresource."""

from fieldmanagers.contract import FieldManager
from syncagent.kube import kinds

MANAGER = FieldManager(
    name="syncagent/graph-status",
    kinds=(kinds.DGD.kind,),
    paths=(".status*",),
    subresource="status",
)
