"""The Kubernetes types in a DCD spec that write themselves (their own ``MarshalJSON``).

Each is written as its Go method writes the value Go's ``UnmarshalJSON`` read: a quantity in
its canonical form, an int-or-string as what it holds, a time in RFC 3339 (UTC, seconds), raw
JSON compacted with Go's HTML escaping and its keys in the order written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from syncagent.render.gojson.duration import go_duration
from syncagent.render.gojson.quantity import canonical_quantity
from syncagent.render.gojson.strings import go_float, go_string

_APIMACHINERY: Final = "k8s.io/apimachinery/pkg/"
QUANTITY: Final = _APIMACHINERY + "api/resource.Quantity"
INT_OR_STRING: Final = _APIMACHINERY + "util/intstr.IntOrString"
TIME: Final = _APIMACHINERY + "apis/meta/v1.Time"
RAW_EXTENSION: Final = _APIMACHINERY + "runtime.RawExtension"
DURATION: Final = _APIMACHINERY + "apis/meta/v1.Duration"
FIELDS_V1: Final = _APIMACHINERY + "apis/meta/v1.FieldsV1"
EXTENSIONS_JSON: Final = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON"
RAW_MESSAGE: Final = "encoding/json.RawMessage"
_TIME: Final = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


def _quantity(value: Any) -> str:
    return go_string(canonical_quantity(str(value)))


def _int_or_string(value: Any) -> str:
    return go_string(value) if isinstance(value, str) else str(int(value))


def _time(value: Any) -> str:
    match = _TIME.fullmatch(str(value))
    if match is None or match[3] not in ("Z", "z", "+00:00"):
        # Go converts other offsets to UTC; the graphs syncagent serves carry no times.
        raise ValueError(f"time {value!r} is not an RFC 3339 UTC time syncagent can re-encode")
    return go_string(f"{match[1]}T{match[2]}Z")


def raw_json(value: Any) -> str:
    """Raw JSON as Go's encoder re-emits a ``MarshalJSON`` result: compacted, HTML escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{go_string(k)}:{raw_json(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(raw_json(v) for v in value) + "]"


_WRITERS: Final[dict[str, Callable[[Any], str]]] = {
    QUANTITY: _quantity,
    INT_OR_STRING: _int_or_string,
    TIME: _time,
    RAW_EXTENSION: raw_json,
    EXTENSIONS_JSON: raw_json,
    RAW_MESSAGE: raw_json,
    FIELDS_V1: raw_json,
    DURATION: lambda value: go_string(go_duration(str(value))),
}
_ZEROS: Final = {
    QUANTITY: '"0"',
    INT_OR_STRING: "0",
    TIME: "null",
    RAW_EXTENSION: "null",
    EXTENSIONS_JSON: "null",
    RAW_MESSAGE: "null",
    FIELDS_V1: "null",
    DURATION: '"0s"',
}
SUPPORTED: Final = frozenset(_WRITERS)


def marshal_custom(name: str, value: Any) -> str:
    if name not in _WRITERS:
        raise ValueError(f"Go type {name} writes itself in a way syncagent does not reproduce")
    return _WRITERS[name](value)


def zero_custom(name: str) -> str:
    if name not in _ZEROS:
        raise ValueError(f"Go type {name} writes itself in a way syncagent does not reproduce")
    return _ZEROS[name]
