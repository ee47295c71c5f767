"""The ``nvidia.com/v1beta1`` DynamoGraphDeployment (DGD) model."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from syncagent.api.base import Crd, KubeModel, mark_set
from syncagent.api.component import API_VERSION, BackendFramework, Component
from syncagent.api.meta import ObjectMeta
from syncagent.api.status import CONDITION_LIST, ComponentReplicaStatus, Condition, find_condition
from syncagent.kube import kinds

DGD_KIND = kinds.DGD.kind
MAX_COMPONENTS = 25

RestartStrategyType = Literal["Sequential", "Parallel"]
GraphState = Literal["initializing", "pending", "successful", "failed"]
# A pathway name: the programs declare them (the CRD enum comes from the program registry).
Pathway = str

_COMPONENT_LIST = Crd(
    {
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-validations": [
            {
                "rule": "self.filter(c, has(c.type) && c.type == 'epp').size() <= 1",
                "message": "at most one component may have type epp",
            },
            {
                "rule": "self.all(c1, !has(c1.name) || self.filter(c2, has(c2.name)"
                " && c2.name.lowerAscii() == c1.name.lowerAscii()).size() == 1)",
                "message": "component names must be unique case-insensitively",
            },
        ],
    },
    maxItems=MAX_COMPONENTS,
)


class RestartStrategy(KubeModel):
    type: Annotated[RestartStrategyType, Crd(default="Sequential")] = "Sequential"
    order: list[str] | None = None


class Restart(KubeModel):
    """``spec.restart``: a new ``id`` requests a restart."""

    id: Annotated[str, Crd(minLength=1)]
    strategy: RestartStrategy | None = None

    @property
    def strategy_type(self) -> RestartStrategyType:
        return self.strategy.type if self.strategy else "Sequential"


class GraphSpec(KubeModel):
    """DGD ``spec``. ``env`` items are Kubernetes EnvVar dicts; unknown fields are kept."""

    __crd__: ClassVar[dict[str, Any]] = {
        "preserve_unknown": True,
        "validations": [
            {
                "rule": "oldSelf.hasValue() || !has(self.restart)",
                "optionalOldSelf": True,
                "message": "spec.restart must be unset on create; set spec.restart.id after"
                " creation to request a restart",
            }
        ],
    }

    components: Annotated[list[Component], _COMPONENT_LIST] = Field(default_factory=list)
    env: Annotated[list[dict[str, Any]] | None, Crd(kube="EnvVar[]")] = None
    annotations: dict[str, str] | None = None
    labels: dict[str, str] | None = None
    backend_framework: BackendFramework | None = None
    restart: Restart | None = None

    def component(self, name: str) -> Component | None:
        return next((c for c in self.components if c.name == name), None)


class RestartStatus(KubeModel):
    observed_id: str | None = Field(default=None, alias="observedID")
    phase: str | None = None
    in_progress: list[str] | None = None


class CheckpointStatus(KubeModel):
    """``status.checkpoints[<component>]``."""

    checkpoint_name: str | None = None
    ready: bool | None = None


# Recorded annotations ``status.routing`` keeps in a field of their own (annotation -> field):
# the enable-grove value predates ``annotations``.
ROUTING_FIELDS: dict[str, str] = {"nvidia.com/enable-grove": "groveAnnotation"}


class RoutingStatus(KubeModel):
    """``status.routing`` (our design): the pathway and the raw enable-grove value behind it."""

    pathway: Pathway
    grove_annotation: str | None = None
    # Other annotations the pathways record (routing's ``Program.records``), by name.
    annotations: dict[str, str] | None = None


class GraphStatus(KubeModel):
    observed_generation: Annotated[int | None, Crd(format="int64")] = None
    state: Annotated[GraphState, Crd(default="initializing")] = "initializing"
    conditions: Annotated[list[Condition] | None, CONDITION_LIST] = None
    components: dict[str, ComponentReplicaStatus] | None = None
    restart: RestartStatus | None = None
    checkpoints: dict[str, CheckpointStatus] | None = None
    routing: RoutingStatus | None = None

    def condition(self, type_: str) -> Condition | None:
        return find_condition(self.conditions, type_)


class DynamoGraphDeployment(KubeModel):
    """``nvidia.com/v1beta1`` DynamoGraphDeployment."""

    api_version: str = API_VERSION
    kind: str = DGD_KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: GraphSpec = Field(default_factory=GraphSpec)
    status: GraphStatus | None = None

    @model_validator(mode="after")
    def _always_emit_type(self) -> DynamoGraphDeployment:
        mark_set(self, "api_version", "kind")
        return self

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""

    @property
    def ref(self) -> str:
        """``Kind/namespace/name``, the prefix of every message about this graph."""
        return f"{self.kind}/{self.namespace}/{self.name}"
