"""`syncagent/scaling-adapters` and `syncagent/scaling-adapter-seed`: the graph's
DynamoGraphDeploymentScalingAdapters.

The seed manager creates an adapter (a plain create, so it never overwrites one that exists)
with the component's replicas; from then on ``spec.replicas`` is the adapter's (an autoscaler's
``/scale`` writes), and the applies of ``syncagent/scaling-adapters`` leave it out.
"""

from fieldmanagers.contract import FieldManager
from syncagent.kube import kinds

MANAGER = FieldManager(
    name="syncagent/scaling-adapters",
    kinds=(kinds.SCALING_ADAPTER.kind,),
    paths=(".spec.dgdRef*", ".metadata.labels*"),
)

SEED = FieldManager(
    name="syncagent/scaling-adapter-seed",
    kinds=(kinds.SCALING_ADAPTER.kind,),
    paths=(".spec*", ".metadata.labels*", ".metadata.ownerReferences*"),
    operation="Update",
    notes="the create of an adapter; spec.replicas passes to whoever scales it next",
)

# The agent's one write to a graph's spec: an adapted component's replicas, set to its
# adapter's (a JSON patch by index, each entry guarded by the component's name).
REPLICAS = FieldManager(
    name="syncagent/scaling-adapter-replicas",
    kinds=(kinds.DGD.kind,),
    paths=(".spec.components",),
    operation="Update",
    notes="only spec.components[].replicas of a component with scalingAdapter",
)

STATUS = FieldManager(
    name="syncagent/scaling-adapter-status",
    kinds=(kinds.SCALING_ADAPTER.kind,),
    paths=(".status*",),
    subresource="status",
)
