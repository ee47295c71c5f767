"""``metadata`` of our objects: the ObjectMeta fields the agent reads or writes."""

from __future__ import annotations

from typing import Any

from syncagent.api.base import KubeModel


class OwnerReference(KubeModel):
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(KubeModel):
    """A Kubernetes ObjectMeta; fields not listed (e.g. ``managedFields``) are kept as extras."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[dict[str, Any]] | None = None

    @property
    def being_deleted(self) -> bool:
        return bool(self.deletion_timestamp)

    def label(self, key: str) -> str | None:
        return (self.labels or {}).get(key)

    def annotation(self, key: str) -> str | None:
        return (self.annotations or {}).get(key)

    def controller_ref(self) -> OwnerReference | None:
        """The owner reference with ``controller: true``, if any."""
        return next((r for r in self.owner_references or () if r.controller), None)

    def owner_of_kind(self, kind: str) -> OwnerReference | None:
        return next((r for r in self.owner_references or () if r.kind == kind), None)
