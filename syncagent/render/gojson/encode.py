"""Go's ``json.Marshal`` of a typed value, from the JSON-shaped data that value was decoded from.

A value here is what Go's ``json.Unmarshal`` would read into the typed struct and what
``json.Marshal`` then writes: struct fields in Go's field order (embedded structs flattened),
a field skipped by ``omitempty`` when empty (never a struct), an absent field written as its zero
value (``null`` for pointers, slices and maps; ``""``, ``0``, ``false``; a struct's own zero
fields), map keys sorted, types with their own ``MarshalJSON`` written as Go writes them
(:mod:`.marshalers`). The types come from the committed table (:mod:`syncagent.api.gotypes`),
generated from upstream's Go source.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncagent.api.gotypes import GoTypes, TypeRef
from syncagent.render.gojson.marshalers import marshal_custom, zero_custom
from syncagent.render.gojson.strings import go_float, go_string

_SCALAR_ZERO = {"string": '""', "int": "0", "uint": "0", "float64": "0", "float32": "0"}
_SCALAR_ZERO["bool"] = "false"
_NULL_ZERO = frozenset({"ptr", "slice", "map", "interface", "bytes"})


def marshal(value: Any, ref: TypeRef, types: GoTypes) -> str:
    """``value`` (``None`` for an absent or null one) as Go writes the type ``ref``."""
    kind = ref["kind"]
    if value is None:
        return _zero(ref, types)
    if kind == "struct":
        return _struct(value, ref["name"], types)
    if kind in ("marshaler", "textmarshaler"):
        return marshal_custom(ref["name"], value)
    if kind == "ptr":
        return marshal(value, ref["elem"], types)
    if kind in ("slice", "array"):
        return "[" + ",".join(marshal(v, ref["elem"], types) for v in value) + "]"
    if kind == "map":
        items = sorted((str(k), v) for k, v in value.items())
        return (
            "{"
            + ",".join(f"{go_string(k)}:{marshal(v, ref['elem'], types)}" for k, v in items)
            + "}"
        )
    return _scalar(value, kind)


def _scalar(value: Any, kind: str) -> str:
    if kind == "interface":
        return marshal_untyped(value)
    if kind in ("string", "bytes"):
        return go_string(str(value))
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("int", "uint"):
        return str(int(value))
    if kind in ("float64", "float32"):
        return go_float(float(value))
    raise ValueError(f"Go JSON kind {kind!r} is not one syncagent encodes")


def marshal_untyped(value: Any) -> str:
    """A value Go decoded into ``interface{}``: maps sorted, every number a float64."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_float(float(value))
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, Mapping):
        items = sorted(value.items())
        return "{" + ",".join(f"{go_string(k)}:{marshal_untyped(v)}" for k, v in items) + "}"
    return "[" + ",".join(marshal_untyped(v) for v in value) + "]"


def _zero(ref: TypeRef, types: GoTypes) -> str:
    kind = ref["kind"]
    if kind in _NULL_ZERO:
        return "null"
    if kind == "struct":
        return _struct({}, ref["name"], types)
    if kind in ("marshaler", "textmarshaler"):
        return zero_custom(ref["name"])
    if kind == "array":
        return "[" + ",".join(_zero(ref["elem"], types) for _ in range(ref["len"])) + "]"
    return _SCALAR_ZERO[kind]


def _struct(value: Mapping[str, Any], name: str, types: GoTypes) -> str:
    parts = []
    for field in types.fields(name):
        group = field.get("embeddedPointer")
        if group and not any(f["json"] in value for f in types.group(name, group)):
            continue  # behind a nil embedded pointer
        item = value.get(field["json"])
        if _omitted(item, field, types):
            continue
        parts.append(f"{go_string(field['json'])}:{_field(item, field, types)}")
    return "{" + ",".join(parts) + "}"


def _field(item: Any, field: Mapping[str, Any], types: GoTypes) -> str:
    text = marshal(item, field["type"], types)
    if field.get("string") and field["type"]["kind"] in ("int", "uint", "bool", "float64"):
        return go_string(text)  # the ",string" option quotes a scalar
    return text


def _omitted(item: Any, field: Mapping[str, Any], types: GoTypes) -> bool:
    kind = field["type"]["kind"]
    if field.get("omitzero") and item is None:
        return True
    if not field.get("omitempty") or kind in ("struct", "marshaler", "textmarshaler", "array"):
        return False
    if item is None:
        return True
    if kind in ("string", "bytes", "slice", "map"):
        return len(item) == 0
    if kind in ("int", "uint", "float64", "float32", "bool"):
        return not item
    return False
