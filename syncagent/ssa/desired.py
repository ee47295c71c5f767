"""Desired objects are sparse intent: identity, refusal rules and the convergence digest."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from syncagent.kube.objects import Body, ObjectRef
from syncagent.ssa.errors import DesiredObjectError
from syncagent.ssa.paths import Field, Index, Key, Value, parse

# Fields only the server sets; a desired object carrying one was read back, not rendered.
_SERVER_OWNED = (
    "managedFields",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "selfLink",
)


def ref_of(obj: Mapping[str, Any]) -> ObjectRef:
    """The identity of an object; refuses one without apiVersion, kind or name."""
    ref = Body(obj).ref
    for field, value in (("apiVersion", ref.api_version), ("kind", ref.kind)):
        if not value:
            raise DesiredObjectError(ref.subject, f"{field} is required; set it on the object")
    if not ref.name:
        raise DesiredObjectError(
            ref.subject, "metadata.name is required (generateName is not supported by apply)"
        )
    return ref


def check_desired(
    obj: Mapping[str, Any],
    *,
    subresource: str = "",
    resource_version_precondition: bool = False,
) -> ObjectRef:
    """Refuse a desired object that is not sparse intent; return its identity.

    ``status`` is accepted only for a status apply. ``metadata.resourceVersion`` only when the
    caller marks it as a deliberate precondition (then it is required).
    """
    ref = ref_of(obj)
    meta = Body(obj).meta.raw
    for field in _SERVER_OWNED:
        if field in meta:
            raise DesiredObjectError(
                ref.subject,
                f"metadata.{field} is set by the server; remove it from the desired object "
                "(desired objects are sparse intent, not a server object read back)",
            )
    _check_resource_version(ref, meta, resource_version_precondition)
    if subresource == "status" and "status" not in obj:
        raise DesiredObjectError(ref.subject, "a status apply needs a status field")
    if subresource != "status" and "status" in obj:
        raise DesiredObjectError(
            ref.subject,
            "status is written only through the status subresource; remove it or apply "
            'with subresource="status"',
        )
    for path in _null_paths(obj, ""):
        raise DesiredObjectError(
            ref.subject, f"{path} is null; omit the field instead of sending null"
        )
    return ref


def _check_resource_version(ref: ObjectRef, meta: Mapping[str, Any], precondition: bool) -> None:
    has_rv = bool(meta.get("resourceVersion"))
    if has_rv and not precondition:
        raise DesiredObjectError(
            ref.subject,
            "metadata.resourceVersion is set; remove it, or pass "
            "resource_version_precondition=True if it is a deliberate precondition",
        )
    if precondition and not has_rv:
        raise DesiredObjectError(
            ref.subject, "resource_version_precondition=True needs metadata.resourceVersion"
        )


def _null_paths(node: Any, prefix: str) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            path = f"{prefix}.{key}"
            if value is None:
                yield path
            else:
                yield from _null_paths(value, path)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if value is None:
                yield f"{prefix}[{i}]"
            else:
                yield from _null_paths(value, f"{prefix}[{i}]")


def digest(obj: Mapping[str, Any]) -> str:
    """A stable digest of a desired object (orjson, sorted keys), without its precondition."""
    meta = dict(obj.get("metadata") or {})
    meta.pop("resourceVersion", None)
    body = {**obj, "metadata": meta}
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def without(obj: Mapping[str, Any], paths: Iterable[str]) -> dict[str, Any]:
    """A copy of ``obj`` with the fields at ``paths`` (readable paths, as conflicts name them)
    left out: a field of a map, or an item of a list. A path not in ``obj`` changes nothing."""
    out = copy.deepcopy(dict(obj))
    for text in paths:
        path = parse(text, like=out)
        if not path:
            continue
        parent: Any = out
        for element in path[:-1]:
            parent = _child(parent, element)
            if parent is None:
                break
        else:
            _drop(parent, path[-1])
    return out


def _child(node: Any, element: Any) -> Any:
    if isinstance(element, Field):
        return node.get(element.name) if isinstance(node, dict) else None
    if not isinstance(node, list):
        return None
    index = _index(node, element)
    return node[index] if index is not None else None


def _drop(node: Any, element: Any) -> None:
    if isinstance(element, Field):
        if isinstance(node, dict):
            node.pop(element.name, None)
        return
    if isinstance(node, list) and (index := _index(node, element)) is not None:
        del node[index]


def _index(items: list[Any], element: Any) -> int | None:
    if isinstance(element, Index):
        return element.index if element.index < len(items) else None
    for i, item in enumerate(items):
        if isinstance(element, Value) and item == element.value:
            return i
        if (
            isinstance(element, Key)
            and isinstance(item, dict)
            and all(item.get(k) == v for k, v in element.items)
        ):
            return i
    return None
