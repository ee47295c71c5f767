"""The DynamoCheckpoint object: read only, as the checkpoint readiness source (docs/api.md §2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from syncagent.api.base import KubeModel, mark_set
from syncagent.api.meta import ObjectMeta
from syncagent.kube.objects import Body

CHECKPOINT_API_VERSION = "nvidia.com/v1alpha1"
CHECKPOINT_KIND = "DynamoCheckpoint"
CHECKPOINT_PLURAL = "dynamocheckpoints"
CHECKPOINT_SHORT_NAME = "dckpt"

CheckpointPhase = Literal["Pending", "Creating", "Ready", "Failed"]
READY_PHASE = "Ready"


class DynamoCheckpointStatus(KubeModel):
    phase: str | None = None


class DynamoCheckpoint(KubeModel):
    """``nvidia.com/v1alpha1`` DynamoCheckpoint; ``spec`` is not interpreted."""

    api_version: str = CHECKPOINT_API_VERSION
    kind: str = CHECKPOINT_KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: dict[str, Any] | None = None
    status: DynamoCheckpointStatus | None = None

    @model_validator(mode="after")
    def _always_emit_type(self) -> DynamoCheckpoint:
        mark_set(self, "api_version", "kind")
        return self

    @property
    def ready(self) -> bool:
        """Ready iff ``status.phase == "Ready"``."""
        return self.status is not None and self.status.phase == READY_PHASE


def checkpoint_ready(checkpoint: DynamoCheckpoint | Mapping[str, Any] | None) -> bool:
    """Whether a DynamoCheckpoint (the model or the live wire object) is ready; a missing
    checkpoint (or missing API) is not."""
    if isinstance(checkpoint, DynamoCheckpoint):
        return checkpoint.ready
    return Body(checkpoint).status.get("phase") == READY_PHASE
