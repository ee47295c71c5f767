"""`syncagent/components`: the DynamoComponentDeployments generated from a graph."""

from fieldmanagers.contract import FieldManager
from syncagent.kube import kinds

MANAGER = FieldManager(
    name="syncagent/components",
    kinds=(kinds.DCD.kind,),
    paths=(".spec*", ".metadata.labels*", ".metadata.annotations*"),
)
