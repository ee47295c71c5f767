"""The shapes ``convert`` reads from a v1alpha1 graph, checked before anything is converted. Pure.

A field of the wrong shape cannot be converted faithfully (``envs: "A=1"`` would become a list
of characters), so it is refused with its v1alpha1 path instead of being carried into the
v1beta1 output under another name. Only fields the conversion interprets are listed; the rest
are copied as they are and checked, after conversion, against the v1beta1 schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

OBJECT = "a mapping"
OBJECTS = "a list of mappings"
STRINGS_MAP = "a mapping of strings to strings"
STRING = "a string"

# Path inside a service (dots: nested mappings) -> the shape the conversion needs.
SERVICE_SHAPES: dict[str, str] = {
    "componentType": STRING,
    "subComponentType": STRING,
    "envs": OBJECTS,
    "envFromSecret": STRING,
    "labels": STRINGS_MAP,
    "annotations": STRINGS_MAP,
    "resources": OBJECT,
    "resources.requests": OBJECT,
    "resources.limits": OBJECT,
    "resources.requests.custom": OBJECT,
    "resources.limits.custom": OBJECT,
    "sharedMemory": OBJECT,
    "scalingAdapter": OBJECT,
    "volumeMounts": OBJECTS,
    "livenessProbe": OBJECT,
    "readinessProbe": OBJECT,
    "extraPodMetadata": OBJECT,
    "extraPodMetadata.labels": STRINGS_MAP,
    "extraPodMetadata.annotations": STRINGS_MAP,
    "extraPodSpec": OBJECT,
    "extraPodSpec.containers": OBJECTS,
    "extraPodSpec.volumes": OBJECTS,
    "extraPodSpec.mainContainer": OBJECT,
    "extraPodSpec.mainContainer.env": OBJECTS,
    "extraPodSpec.mainContainer.envFrom": OBJECTS,
    "extraPodSpec.mainContainer.resources": OBJECT,
    "extraPodSpec.mainContainer.resources.requests": OBJECT,
    "extraPodSpec.mainContainer.resources.limits": OBJECT,
    "resources.requests.gpuType": STRING,
    "resources.limits.gpuType": STRING,
    "extraPodSpec.mainContainer.volumeMounts": OBJECTS,
}
GRAPH_SHAPES: dict[str, str] = {"envs": OBJECTS, "pvcs": OBJECTS}
# Lists of EnvVar: each item needs a string name (merging env lists is by name).
NAMED_ITEMS = ("envs", "extraPodSpec.mainContainer.env")


def shape_problems(fields: dict[str, Any], shapes: dict[str, str], *, at: str) -> Iterator[str]:
    """``<path>: must be <shape>, not <what it is>`` for each field of the wrong shape."""
    for dotted, shape in shapes.items():
        value = _lookup(fields, dotted)
        if value is None:
            continue
        path = f"{at}.{dotted}"
        if not _fits(value, shape):
            yield f"{path}: must be {shape}, not {_describe(value)}"
        elif dotted in NAMED_ITEMS:
            yield from _unnamed(value, path)


def _lookup(fields: dict[str, Any], dotted: str) -> Any:
    value: Any = fields
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _fits(value: Any, shape: str) -> bool:
    if shape == STRING:
        return isinstance(value, str)
    if shape == OBJECT:
        return isinstance(value, dict)
    if shape == OBJECTS:
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _unnamed(items: list[dict[str, Any]], path: str) -> Iterator[str]:
    for i, item in enumerate(items):
        if not isinstance(item.get("name"), str) or not item["name"]:
            yield f"{path}[{i}].name: required (a non-empty string)"


def _describe(value: Any) -> str:
    if isinstance(value, list):
        bad = next((v for v in value if not isinstance(v, dict)), None)
        return f"a list holding {_describe(bad)}" if bad is not None else "a list"
    names = {dict: "a mapping", str: "a string", bool: "a boolean", int: "a number"}
    kind = next((n for t, n in names.items() if isinstance(value, t)), type(value).__name__)
    if isinstance(value, dict):
        bad = next((v for v in value.values() if not isinstance(v, str)), None)
        return f"a mapping holding {_describe(bad)}" if bad is not None else kind
    if isinstance(value, str):
        return f"the string {value[:30]!r}"
    return "a number" if isinstance(value, float) else kind
