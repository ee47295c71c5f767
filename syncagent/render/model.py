"""Typed apply models: what the renderer returns instead of server objects."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from syncagent.kube.objects import OwnerRef

# Written in ownerReferences when the owner does not exist yet (offline render, plan).
PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"


class RenderError(Exception):
    """A graph the renderer cannot turn into objects; ``reason`` is the status reason."""

    def __init__(self, message: str, *, reason: str = "failed_to_reconcile_the_resources") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Rendered:
    """One desired object: sparse intent for ``manager`` (no status, no nulls, no owner refs).

    ``body`` is the full manifest (apiVersion, kind, metadata, spec...); treat it as read-only
    and take :meth:`manifest` for a private copy. ``owner`` is the intended controller: the
    program adds its reference on create and under ``syncagent/ownership`` (docs/routing.md §3).
    ``shared`` marks an object co-owned by several owners (the model Service, docs/rendering.md §4).
    """

    manager: str
    api_version: str
    kind: str
    name: str
    namespace: str
    body: dict[str, Any] = field(hash=False)
    owner: OwnerRef | None = None
    shared: bool = False

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.api_version, self.kind, self.namespace, self.name)

    def manifest(self) -> dict[str, Any]:
        return copy.deepcopy(self.body)

    def create_manifest(self) -> dict[str, Any]:
        """The create apply: the content plus the controller reference of :attr:`owner`."""
        body = self.manifest()
        if self.owner is not None:
            item = self.owner.item(controller=True)
            item["uid"] = item["uid"] or PLACEHOLDER_UID
            body["metadata"]["ownerReferences"] = [item]
        return body


def build(
    *,
    manager: str,
    api_version: str,
    kind: str,
    name: str,
    namespace: str,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: OwnerRef | None = None,
    shared: bool = False,
    **top: Any,
) -> Rendered:
    """A :class:`Rendered` whose body omits empty label/annotation maps."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    body = {"apiVersion": api_version, "kind": kind, "metadata": metadata, **top}
    return Rendered(
        manager=manager,
        api_version=api_version,
        kind=kind,
        name=name,
        namespace=namespace,
        body=body,
        owner=owner,
        shared=shared,
    )
