"""Objects as the API server returns them: a thin typed view, and references to objects."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Which object: enough to address it and to name it in messages."""

    api_version: str
    kind: str
    name: str
    namespace: str = ""

    @property
    def subject(self) -> str:
        """``Kind/namespace/name`` (``Kind/name`` when cluster-scoped): every message's prefix."""
        if self.namespace:
            return f"{self.kind}/{self.namespace}/{self.name}"
        return f"{self.kind}/{self.name}"

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]


@dataclass(frozen=True, slots=True)
class OwnerRef:
    """An owner, as its ``ownerReferences`` items name it."""

    api_version: str
    kind: str
    name: str
    uid: str = ""

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> OwnerRef:
        """From one ``ownerReferences`` item."""
        return cls(
            str(item.get("apiVersion") or ""),
            str(item.get("kind") or ""),
            str(item.get("name") or ""),
            str(item.get("uid") or ""),
        )

    def item(self, *, controller: bool) -> dict[str, Any]:
        """The ``ownerReferences`` item: the full controller item, or a plain owner item."""
        item: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
        }
        if controller:
            item |= {"controller": True, "blockOwnerDeletion": True}
        return item

    def describe(self) -> str:
        return f'{self.api_version}/{self.kind} "{self.name}"'


class Meta:
    """``metadata`` of an object, read-only; absent fields read as empty."""

    __slots__ = ("raw",)

    def __init__(self, raw: Mapping[str, Any] | None) -> None:
        self.raw: Mapping[str, Any] = raw if isinstance(raw, Mapping) else _EMPTY

    def _text(self, key: str) -> str:
        return str(self.raw.get(key) or "")

    @property
    def name(self) -> str:
        return self._text("name")

    @property
    def namespace(self) -> str:
        return self._text("namespace")

    @property
    def uid(self) -> str:
        return self._text("uid")

    @property
    def resource_version(self) -> str:
        return self._text("resourceVersion")

    @property
    def generation(self) -> int:
        return int(self.raw.get("generation") or 0)

    @property
    def creation_timestamp(self) -> str:
        return self._text("creationTimestamp")

    @property
    def deletion_timestamp(self) -> str:
        return self._text("deletionTimestamp")

    @property
    def labels(self) -> Mapping[str, str]:
        return self.raw.get("labels") or _EMPTY

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.raw.get("annotations") or _EMPTY

    @property
    def owner_references(self) -> list[Mapping[str, Any]]:
        return list(self.raw.get("ownerReferences") or ())

    @property
    def managed_fields(self) -> list[Mapping[str, Any]]:
        return list(self.raw.get("managedFields") or ())


class Body:
    """A read-only typed view of one object (a wire dict from the API server or a cache).

    ``Body(None)`` is an absent object: empty fields, not being deleted, no controller.
    """

    __slots__ = ("raw",)

    def __init__(self, raw: Mapping[str, Any] | None) -> None:
        self.raw: Mapping[str, Any] = raw if isinstance(raw, Mapping) else _EMPTY

    def __bool__(self) -> bool:
        return bool(self.raw)

    @property
    def api_version(self) -> str:
        return str(self.raw.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.raw.get("kind") or "")

    @property
    def meta(self) -> Meta:
        return Meta(self.raw.get("metadata"))

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.raw.get("spec") or _EMPTY

    @property
    def status(self) -> Mapping[str, Any]:
        return self.raw.get("status") or _EMPTY

    @property
    def ref(self) -> ObjectRef:
        meta = self.meta
        return ObjectRef(self.api_version, self.kind, meta.name, meta.namespace)

    @property
    def subject(self) -> str:
        return self.ref.subject

    @property
    def being_deleted(self) -> bool:
        """Whether the object has a ``deletionTimestamp``: it counts as absent and not ready,
        and is never reconciled (docs/lifecycle.md §1)."""
        return bool(self.meta.deletion_timestamp)

    def owners(self) -> Iterator[tuple[OwnerRef, bool]]:
        """Every owner reference, with whether it is the controller reference."""
        for item in self.meta.owner_references:
            yield OwnerRef.from_item(item), bool(item.get("controller"))

    @property
    def controller(self) -> OwnerRef | None:
        """Who controls the object (the reference with ``controller: true``), if anyone."""
        return next((ref for ref, controls in self.owners() if controls), None)

    def controlled_by(self, uid: str) -> bool:
        """Whether the controller reference points at the object with ``uid``."""
        controller = self.controller
        return controller is not None and controller.uid == uid

    def owned_by(self, uid: str) -> bool:
        """Whether any owner reference points at the object with ``uid``."""
        return any(ref.uid == uid for ref, _ in self.owners())

    def controller_of_kind(self, kind: str) -> OwnerRef | None:
        """The controller reference if it points at a ``kind``."""
        controller = self.controller
        return controller if controller is not None and controller.kind == kind else None


def body(obj: Mapping[str, Any] | Body | None) -> Body:
    """The view of ``obj`` (a wire dict, None for an absent object, or a view already)."""
    return obj if isinstance(obj, Body) else Body(obj)


# The one answer to each question a reconcile asks of a live child; every layer asks it here.


def being_deleted(obj: Mapping[str, Any] | Body | None) -> bool:
    """Whether ``obj`` has a ``deletionTimestamp`` (an absent object is not being deleted)."""
    return body(obj).being_deleted


def controller_of(obj: Mapping[str, Any] | Body | None) -> OwnerRef | None:
    """Who controls ``obj`` (its reference with ``controller: true``), if anyone."""
    return body(obj).controller


def controlled_by(obj: Mapping[str, Any] | Body | None, uid: str) -> bool:
    """Whether ``obj``'s controller reference points at the object with ``uid``."""
    return body(obj).controlled_by(uid)
