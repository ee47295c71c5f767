"""Component fields (``spec.components[]`` of a DGD, ``spec`` of a DCD) and the DCD itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ModelWrapValidatorHandler, PrivateAttr, model_validator

from syncagent.api.base import Crd, KubeModel, mark_set
from syncagent.api.meta import ObjectMeta
from syncagent.api.status import CONDITION_LIST, ComponentReplicaStatus, Condition, find_condition
from syncagent.kube import kinds

GROUP = "nvidia.com"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
DCD_KIND = kinds.DCD.kind

MAIN_CONTAINER = "main"
NAME_PATTERN = r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$"
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

ComponentType = Literal["frontend", "worker", "prefill", "decode", "planner", "epp"]
BackendFramework = Literal["sglang", "vllm", "trtllm"]
StartupPolicy = Literal["Immediate", "WaitForCheckpoint"]
WAIT_FOR_CHECKPOINT = "WaitForCheckpoint"
WORKER_TYPES: frozenset[str] = frozenset({"worker", "prefill", "decode"})

# Kept (never pruned) but not interpreted: CEL rules name it, so the CRD must declare it.
_OPAQUE = Crd({"type": "object", "x-kubernetes-preserve-unknown-fields": True})
_INT_OR_STRING_QUANTITY = Crd(
    {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    pattern=QUANTITY_PATTERN,
)


class Multinode(KubeModel):
    """``multinode``: one group of ``node_count`` pods per replica."""

    __crd__: ClassVar[dict[str, Any]] = {"preserve_unknown": True}

    node_count: Annotated[int, Crd(format="int32", minimum=2, default=2)] = 2


class ModelRef(KubeModel):
    name: Annotated[str, Crd(minLength=1)]
    revision: str | None = None


class CheckpointConfig(KubeModel):
    """``experimental.checkpoint``: only a reference to an existing DynamoCheckpoint is read."""

    __crd__: ClassVar[dict[str, Any]] = {
        "preserve_unknown": True,
        "validations": [
            {
                "rule": "!has(self.job) || !has(self.checkpointRef)"
                " || size(self.checkpointRef) == 0",
                "message": "checkpoint.job cannot be set when checkpointRef is specified",
            }
        ],
    }

    enabled: bool
    checkpoint_ref: str | None = None
    startup_policy: Annotated[StartupPolicy, Crd(default="Immediate")] = "Immediate"
    job: Annotated[dict[str, Any] | None, _OPAQUE] = None


class ComponentExperimental(KubeModel):
    __crd__: ClassVar[dict[str, Any]] = {"preserve_unknown": True}

    checkpoint: CheckpointConfig | None = None


class ComponentFields(KubeModel):
    """Fields shared by a DGD component entry and a DCD ``spec``.

    ``pod_template`` is a plain Kubernetes PodTemplateSpec dict. Uninterpreted upstream fields
    (``frontendSidecar``, ``providerOverride``, ``compilationCache``...) live in ``model_extra``
    and round-trip unchanged.
    """

    __crd__: ClassVar[dict[str, Any]] = {
        "preserve_unknown": True,
        "validations": [
            {
                "rule": "!has(self.eppConfig) || (has(self.type) && self.type == 'epp')",
                "message": "eppConfig may only be set when type is epp",
            },
            {
                "rule": "!has(self.minAvailable) || (has(self.replicas) && self.replicas == 0)"
                " || self.minAvailable <= (has(self.replicas) ? self.replicas : 1)",
                "message": "minAvailable must be less than or equal to replicas"
                " unless replicas is 0",
            },
            {
                "rule": "!has(oldSelf.minAvailable) || (has(self.minAvailable)"
                " && self.minAvailable == oldSelf.minAvailable)",
                "message": "minAvailable is immutable after creation",
            },
        ],
    }

    name: Annotated[str | None, Crd(minLength=1, maxLength=63, pattern=NAME_PATTERN)] = None
    type: ComponentType | None = None
    replicas: Annotated[int | None, Crd(format="int32", minimum=0)] = None
    multinode: Multinode | None = None
    pod_template: Annotated[dict[str, Any] | None, Crd(kube="PodTemplateSpec")] = None
    model_ref: ModelRef | None = None
    global_dynamo_namespace: bool | None = None
    shared_memory_size: Annotated[int | str | None, _INT_OR_STRING_QUANTITY] = None
    min_available: Annotated[int | None, Crd(format="int32", minimum=1)] = None
    scaling_adapter: Annotated[dict[str, Any] | None, _OPAQUE] = None
    experimental: ComponentExperimental | None = None
    epp_config: Annotated[dict[str, Any] | None, _OPAQUE] = None

    @property
    def effective_replicas(self) -> int:
        """``replicas``, or 1 when unset."""
        return 1 if self.replicas is None else self.replicas

    @property
    def is_multinode(self) -> bool:
        return self.multinode is not None and self.multinode.node_count > 1

    @property
    def node_count(self) -> int:
        """Pods per replica group: ``multinode.nodeCount`` when multinode, else 1."""
        return self.multinode.node_count if self.is_multinode and self.multinode else 1

    @property
    def is_worker_type(self) -> bool:
        return self.type in WORKER_TYPES

    @property
    def checkpoint(self) -> CheckpointConfig | None:
        return self.experimental.checkpoint if self.experimental else None

    @property
    def pod_spec(self) -> dict[str, Any]:
        """``podTemplate.spec`` (an empty dict when absent; a copy is not made)."""
        return (self.pod_template or {}).get("spec") or {}

    @property
    def pod_metadata(self) -> dict[str, Any]:
        return (self.pod_template or {}).get("metadata") or {}

    def containers(self) -> list[dict[str, Any]]:
        return list(self.pod_spec.get("containers") or [])

    def main_container(self) -> dict[str, Any] | None:
        """The container named ``main``, or None."""
        return next((c for c in self.containers() if c.get("name") == MAIN_CONTAINER), None)

    def sidecars(self) -> list[dict[str, Any]]:
        return [c for c in self.containers() if c.get("name") != MAIN_CONTAINER]


def node_count_of(component: Mapping[str, Any]) -> int:
    """:attr:`ComponentFields.node_count` of a wire-form component (DGD entry or DCD ``spec``).

    Only ``multinode`` is read, through the model, so every caller shares its default
    (``nodeCount`` 2 when ``multinode`` is present without it) and its rule (> 1 = multinode).
    """
    raw = component.get("multinode")
    multinode = None if raw is None else Multinode.model_validate(raw)
    return ComponentFields(multinode=multinode).node_count


def is_multinode_component(component: Mapping[str, Any]) -> bool:
    """:attr:`ComponentFields.is_multinode` of a wire-form component."""
    return node_count_of(component) > 1


@dataclass(frozen=True, slots=True)
class CheckpointUse:
    """A component's enabled checkpoint: the DynamoCheckpoint it restores from and its policy."""

    ref: str
    startup_policy: str = "Immediate"

    def holds(self, ready: Mapping[str, bool]) -> bool:
        """Whether the component is held at zero replicas: it waits for a checkpoint that is
        not ready (a missing entry is not ready, docs/api.md §2)."""
        return self.startup_policy == WAIT_FOR_CHECKPOINT and not ready.get(self.ref, False)


def checkpoint_of(component: Mapping[str, Any]) -> CheckpointUse | None:
    """The checkpoint of a wire-form component (DGD entry or DCD ``spec``), when enabled with a
    ``checkpointRef``: the one answer renderers, programs and status share."""
    ck = (component.get("experimental") or {}).get("checkpoint") or {}
    if ck.get("enabled") and ck.get("checkpointRef"):
        return CheckpointUse(str(ck["checkpointRef"]), str(ck.get("startupPolicy") or "Immediate"))
    return None


class Component(ComponentFields):
    """One entry of a DGD's ``spec.components``.

    The entry keeps the wire form it was parsed from (:meth:`wire`): a generated DCD's ``spec``
    is a copy of the entry as written (docs/rendering.md §1), key order and fields we do not
    interpret included, so rendering from the model stays byte-identical to the manifest.
    """

    name: Annotated[str, Crd(minLength=1, maxLength=63, pattern=NAME_PATTERN)]
    _wire: Mapping[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_wire(cls, data: Any, handler: ModelWrapValidatorHandler[Component]) -> Component:
        model = handler(data)
        if isinstance(data, Mapping):
            model._wire = data
        return model

    def wire(self) -> Mapping[str, Any]:
        """The entry as written (read-only: copy before changing it); a model built in code
        gives its sparse wire form."""
        return self._wire if self._wire is not None else self.to_dict()

    @property
    def lower_name(self) -> str:
        """The name used in child object names."""
        return self.name.lower()


class DynamoComponentDeploymentSpec(ComponentFields):
    """A DCD ``spec``: the component fields plus ``backendFramework``; ``name`` may be empty."""

    backend_framework: BackendFramework | None = None


class DynamoComponentDeploymentStatus(KubeModel):
    observed_generation: Annotated[int | None, Crd(format="int64")] = None
    conditions: Annotated[list[Condition] | None, CONDITION_LIST] = None
    component: ComponentReplicaStatus | None = None

    def condition(self, type_: str) -> Condition | None:
        return find_condition(self.conditions, type_)


class DynamoComponentDeployment(KubeModel):
    """``nvidia.com/v1beta1`` DynamoComponentDeployment (DCD)."""

    api_version: str = API_VERSION
    kind: str = DCD_KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: DynamoComponentDeploymentSpec = Field(default_factory=DynamoComponentDeploymentSpec)
    status: DynamoComponentDeploymentStatus | None = None

    @model_validator(mode="after")
    def _always_emit_type(self) -> DynamoComponentDeployment:
        mark_set(self, "api_version", "kind")
        return self

    @property
    def component_name(self) -> str:
        """``spec.name``, or ``metadata.name`` for a user-created DCD without one."""
        return self.spec.name or self.metadata.name or ""

    @property
    def parent_graph_name(self) -> str:
        """The owning DGD's name, or the DCD's own name when it has no DGD owner."""
        owner = self.metadata.owner_of_kind(kinds.DGD.kind)
        return owner.name if owner else self.metadata.name or ""
