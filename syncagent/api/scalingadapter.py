"""The DynamoGraphDeploymentScalingAdapter (DGDSA): one per component with ``scalingAdapter``.

An adapter exposes ``/scale`` for one component of a graph so HPA, KEDA or Dynamo's planner can
scale it; ``spec.replicas`` is the adapter's from its creation on (docs/api.md §4). The agent
writes and reads it at ``v1beta1``, the version upstream's CRD stores.
"""

from __future__ import annotations

from typing import Annotated

from syncagent.api.base import Crd, KubeModel
from syncagent.kube import kinds

ADAPTER_KIND = kinds.SCALING_ADAPTER.kind
ADAPTER_API_VERSION = kinds.SCALING_ADAPTER.api_version
ADAPTER_SHORT_NAME = "dgdsa"


class GraphComponentRef(KubeModel):
    """``spec.dgdRef``: the graph and the component of it the adapter scales."""

    name: Annotated[str, Crd(minLength=1)]
    component_name: Annotated[str, Crd(minLength=1)]


class ScalingAdapterSpec(KubeModel):
    replicas: Annotated[int, Crd(format="int32", minimum=0)]
    dgd_ref: GraphComponentRef


class ScalingAdapterStatus(KubeModel):
    """What ``/scale`` reads: the replicas the graph runs and the selector of their pods."""

    replicas: Annotated[int | None, Crd(format="int32")] = None
    selector: str | None = None
    last_scale_time: Annotated[str | None, Crd(format="date-time")] = None
