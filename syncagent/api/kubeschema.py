"""Structural CRD schemas for embedded Kubernetes types, from the pinned OpenAPI v3 document.

The document is ``api/openapi-spec/v3/api__v1_openapi.json`` of the ``k8s.io/kubernetes`` module at
the pinned version; the caller passes its path (``syncagent.devcluster.gomod.kubernetes_openapi``
downloads it: this package does no I/O beyond reading the files it is given). Conversion keeps what a CRD needs to behave like the
native type under server-side apply (list types, list map keys, map types, int-or-string,
quantities, required fields) and drops descriptions, enums and defaults (except defaults of list
map keys, which a structural schema requires).

The converted schemas of ``EMBEDDED`` are vendored in ``kubeschemas.json`` so generating CRDs
needs neither Go nor a network; a unit test checks the file against the pinned document.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

CORE = "io.k8s.api.core.v1."
_REF_PREFIX = "#/components/schemas/"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_KEEP_FORMATS = frozenset({"int32", "int64", "double", "float", "byte", "date-time"})
_KEEP_EXTENSIONS = (
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
)
QUANTITY_SCHEMA_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
# An embedded ObjectMeta, trimmed to what a template may carry (as controller-gen emits it).
EMBEDDED_OBJECT_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "name": {"type": "string"},
        "namespace": {"type": "string"},
    },
}
_MAX_DEPTH = 40


@cache
def _definitions(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8"))["components"]["schemas"])


EMBEDDED = ("EnvVar", "PodTemplateSpec")
VENDORED = Path(__file__).with_name("kubeschemas.json")


def convert(name: str, *, path: Path) -> dict[str, Any]:
    """The structural schema of a core/v1 type, converted from the OpenAPI document at ``path``."""
    defs = _definitions(path)
    full = name if "." in name else CORE + name
    if full not in defs:
        raise KeyError(f"{full}: not in the Kubernetes OpenAPI document")
    return _Converter(defs).definition(full, depth=0)


def vendored_text(*, path: Path) -> str:
    """The content ``kubeschemas.json`` must have for the pinned Kubernetes version."""
    data = {name: convert(name, path=path) for name in EMBEDDED}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


@cache
def _vendored() -> str:
    return VENDORED.read_text(encoding="utf-8")


def kube_schema(name: str) -> dict[str, Any]:
    """A vendored structural schema (a fresh copy), e.g. ``PodTemplateSpec`` or ``EnvVar``."""
    schemas = json.loads(_vendored())
    if name not in schemas:
        raise KeyError(f"{name}: not vendored; add it to EMBEDDED and regenerate")
    return dict(schemas[name])


class _Converter:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def definition(self, name: str, *, depth: int) -> dict[str, Any]:
        if name == _QUANTITY:
            return quantity_schema()
        if name == _INT_OR_STRING:
            return int_or_string_schema()
        if name == _OBJECT_META:
            return json.loads(json.dumps(EMBEDDED_OBJECT_META))
        if depth > _MAX_DEPTH:
            raise RecursionError(f"{name}: schema nests deeper than {_MAX_DEPTH} levels")
        return self.schema(self.defs[name], depth=depth + 1)

    def schema(self, node: dict[str, Any], *, depth: int) -> dict[str, Any]:
        ref = _ref_of(node)
        if ref:
            out = self.definition(ref, depth=depth)
            out.update(_extensions(node))
            return out
        out: dict[str, Any] = {}
        if "type" in node:
            out["type"] = node["type"]
        if node.get("format") in _KEEP_FORMATS:
            out["format"] = node["format"]
        if "properties" in node:
            out["type"] = "object"
            out["properties"] = {
                k: self.schema(v, depth=depth) for k, v in sorted(node["properties"].items())
            }
        if "additionalProperties" in node and isinstance(node["additionalProperties"], dict):
            out["additionalProperties"] = self.schema(node["additionalProperties"], depth=depth)
        if "items" in node:
            out["items"] = self.schema(node["items"], depth=depth)
        if node.get("required"):
            out["required"] = sorted(node["required"])
        out.update(_extensions(node))
        if (
            out.get("type") == "object"
            and not out.get("properties")
            and ("additionalProperties" not in out)
        ):
            # A free-form object (RawExtension and the like): keep its content.
            out["x-kubernetes-preserve-unknown-fields"] = True
        _default_list_map_keys(out, node, self)
        return out


def _default_list_map_keys(out: dict[str, Any], node: dict[str, Any], conv: _Converter) -> None:
    """A list map key must be required or defaulted; copy the key's upstream default."""
    keys = out.get("x-kubernetes-list-map-keys")
    items = out.get("items")
    if not keys or not isinstance(items, dict):
        return
    source = node["items"]
    ref = _ref_of(source)
    props = (conv.defs[ref] if ref else source).get("properties", {})
    required = set(items.get("required", ()))
    for key in keys:
        if key in required:
            continue
        default = props.get(key, {}).get("default")
        if default is None:
            raise ValueError(f"list map key {key!r} is neither required nor defaulted")
        items["properties"][key]["default"] = default


def _ref_of(node: dict[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).removeprefix(_REF_PREFIX)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"]).removeprefix(_REF_PREFIX)
    return None


def _extensions(node: dict[str, Any]) -> dict[str, Any]:
    return {k: node[k] for k in _KEEP_EXTENSIONS if k in node}


def quantity_schema() -> dict[str, Any]:
    return {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY_SCHEMA_PATTERN,
        "x-kubernetes-int-or-string": True,
    }


def int_or_string_schema() -> dict[str, Any]:
    return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
