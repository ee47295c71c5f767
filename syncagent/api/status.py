"""Status building blocks shared by the DGD and DCD: conditions and component replica status."""

from __future__ import annotations

from typing import Annotated, Literal

from syncagent.api.base import Crd, KubeModel

ConditionStatus = Literal["True", "False", "Unknown"]
ComponentKind = Literal["PodClique", "PodCliqueScalingGroup", "Deployment", "LeaderWorkerSet"]

REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


class Condition(KubeModel):
    """A ``metav1.Condition``."""

    type: Annotated[str, Crd(maxLength=316, pattern=_TYPE_PATTERN)]
    status: ConditionStatus
    reason: Annotated[str, Crd(minLength=1, maxLength=1024, pattern=REASON_PATTERN)]
    message: Annotated[str, Crd(maxLength=32768)] = ""
    last_transition_time: Annotated[str | None, Crd(format="date-time")] = None
    observed_generation: Annotated[int | None, Crd(format="int64", minimum=0)] = None

    @property
    def is_true(self) -> bool:
        return self.status == "True"


CONDITION_LIST = Crd(
    {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
)


class ComponentReplicaStatus(KubeModel):
    """One component's workload counts (DGD ``status.components[*]``, DCD ``status.component``)."""

    component_kind: ComponentKind
    component_names: list[str] | None = None
    runtime_namespace: str | None = None
    replicas: Annotated[int, Crd(format="int32", minimum=0)]
    updated_replicas: Annotated[int, Crd(format="int32", minimum=0)]
    ready_replicas: Annotated[int | None, Crd(format="int32", minimum=0)] = None
    available_replicas: Annotated[int | None, Crd(format="int32", minimum=0)] = None


def find_condition(conditions: list[Condition] | None, type_: str) -> Condition | None:
    """The condition of this type, if present."""
    return next((c for c in conditions or () if c.type == type_), None)
