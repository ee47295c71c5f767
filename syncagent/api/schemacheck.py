"""Offline structural validation of a DGD/DCD document against our CRD schema. Pure.

The API server validates every write against the CRD's ``openAPIV3Schema`` before the agent
sees it; offline commands (``render``, ``plan``, ``convert``) and the agent's own validation
run the same structural rules here, so a graph the server would reject is rejected offline
with the server's words (``cause.message`` of the 422 response, checked against a real
kube-apiserver in ``tests/cluster/test_bad_input_server_words.py``):

  type        ``Invalid value: "string": <path> in body must be of type integer: "string"``
              (fields with a ``format`` report it: ``must be of type int32: ""`` for a boolean)
  format      ``Invalid value: "": Checked value must be of type integer with format int32 in <path>``
  enum        ``Unsupported value: "x": supported values: "a", "b"``
  bounds      ``Invalid value: -1: <path> in body should be greater than or equal to 0``
  pattern     ``Invalid value: "x": <path> in body should match '<regex>'``
  length      ``Too long: may not be more than 63 bytes``; ``Too many: 26: must have at most 25 items``
  required    ``Required value``; list maps: ``Duplicate value: {"name":"main"}``

Fields the server would prune (unknown outside ``x-kubernetes-preserve-unknown-fields``) come
back as warnings, in the server's ``unknown field "<path>"`` words. CEL rules are not evaluated
here: ``validation.py`` enforces the same rules with its own messages. Documents nested deeper
than ``MAX_DEPTH`` are refused (the renderers and JSON encoders recurse).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

MAX_DEPTH = 64
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_JSON_INT = 2**53  # a float64 beyond this is not "a JSON integer" to the server


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem (or, for unknown fields, one warning) at a JSON path."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class Unknown:
    """A field the schema does not declare: ``pruned`` ones the server drops, others it keeps."""

    path: str
    known: tuple[str, ...]  # the field names declared beside it
    pruned: bool


@dataclass
class Result:
    errors: list[Finding]
    unknown: list[Unknown]


def check(doc: dict[str, Any], schema: dict[str, Any]) -> Result:
    """Every structural error of ``doc`` under ``schema`` (the version's openAPIV3Schema)."""
    result = Result([], [])
    deep = too_deep(doc)
    if deep is not None:
        result.errors.append(deep)
        return result
    result.errors.extend(_metadata_name(doc))
    result.errors.extend(_node(doc, schema, "", result.unknown))
    return result


_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    f"for validation is '{_SUBDOMAIN}')"
)


def _metadata_name(doc: dict[str, Any]) -> Iterator[Finding]:
    """The server's rule for the name of every namespaced custom resource."""
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if name is None:
        yield Finding("metadata.name", "Required value: name or generateName is required")
    if not isinstance(name, str):
        return
    if len(name) > 253:
        yield Finding(
            "metadata.name", f"Invalid value: {_quoted(name)}: must be no more than 253 characters"
        )
    elif not re.fullmatch(_SUBDOMAIN, name):
        yield Finding("metadata.name", f"Invalid value: {_quoted(name)}: {_SUBDOMAIN_MESSAGE}")


def too_deep(value: Any, *, limit: int = MAX_DEPTH) -> Finding | None:
    """The first path nested deeper than ``limit`` (iterative: deep input must not recurse)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > limit:
            shown = path if len(path) <= 120 else path[:117] + "..."
            return Finding(
                shown, f"nested more than {limit} levels deep; flatten or remove this value"
            )
        if isinstance(node, dict):
            stack.extend((v, _join(path, str(k)), depth + 1) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(node))
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _node(
    value: Any, schema: dict[str, Any], path: str, unknown: list[Unknown]
) -> Iterator[Finding]:
    problem = _type_problem(value, schema, path)
    if problem is not None:
        yield problem
        return
    yield from _value_rules(value, schema, path)
    if isinstance(value, dict):
        yield from _object(value, schema, path, unknown)
    elif isinstance(value, list):
        yield from _array(value, schema, path, unknown)


# -- types -------------------------------------------------------------------------------------


def _go_type(value: Any) -> tuple[str, str]:
    """(JSON schema type, Go format) of a decoded JSON value, as kube-openapi names them."""
    if value is None:
        return "null", ""
    if isinstance(value, bool):
        return "boolean", ""
    if isinstance(value, int) and _INT64[0] <= value <= _INT64[1]:
        return "integer", "int64"
    if isinstance(value, int | float):
        return "number", "float64"
    if isinstance(value, str):
        return "string", ""
    if isinstance(value, list):
        return "array", ""
    return "object", ""


def _is_json_integer(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and abs(value) <= _JSON_INT


def _type_problem(value: Any, schema: dict[str, Any], path: str) -> Finding | None:
    if schema.get("x-kubernetes-int-or-string"):
        have, _ = _go_type(value)
        if have in ("integer", "string") or (have == "number" and _is_json_integer(value)):
            return None
        return _type_error(path, "integer,string", have, value)
    want = schema.get("type")
    if not want:
        return None
    have, have_format = _go_type(value)
    float_int = have == "number" and want == "integer" and _is_json_integer(value)
    int_number = have == "integer" and want == "number"
    fmt = schema.get("format", "")
    scalar = not isinstance(value, str | list)
    if scalar and fmt and not (want == have or have_format == fmt or float_int or int_number):
        return _type_error(path, fmt, have_format, value)
    if not (want == have or float_int or int_number):
        return _type_error(path, want, have, value)
    if want == "integer" and fmt in ("int32", "int64"):
        low, high = _INT32 if fmt == "int32" else _INT64
        if not low <= value <= high:
            return Finding(
                path,
                f'Invalid value: "": Checked value must be of type integer with format {fmt} '
                f"in {path}",
            )
    return None


def _type_error(path: str, want: str, have: str, value: Any) -> Finding:
    server = f'Invalid value: "{have}": {path} in body must be of type {want}: "{have}"'
    return Finding(path, f"{server} (got {_preview(value)})")


def _preview(value: Any) -> str:
    """A short rendering of the offending value, for the reader (not the server's words)."""
    if isinstance(value, dict | list):
        return "a mapping" if isinstance(value, dict) else "a list"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


# -- values ------------------------------------------------------------------------------------


def _value_rules(value: Any, schema: dict[str, Any], path: str) -> Iterator[Finding]:
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(_quoted(v) for v in schema["enum"])
        yield Finding(path, f"Unsupported value: {_quoted(value)}: supported values: {allowed}")
        return
    if isinstance(value, str):
        yield from _string_rules(value, schema, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            yield Finding(
                path,
                f"Invalid value: {_number(value)}: {path} in body should be greater than or "
                f"equal to {_number(schema['minimum'])}",
            )
        if "maximum" in schema and value > schema["maximum"]:
            yield Finding(
                path,
                f"Invalid value: {_number(value)}: {path} in body should be less than or "
                f"equal to {_number(schema['maximum'])}",
            )


def _string_rules(value: str, schema: dict[str, Any], path: str) -> Iterator[Finding]:
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        yield Finding(path, f"Too long: may not be more than {schema['maxLength']} bytes")
    elif "minLength" in schema and len(value) < schema["minLength"]:
        yield Finding(
            path,
            f"Invalid value: {_quoted(value)}: {path} in body should be at least "
            f"{schema['minLength']} chars long",
        )
    elif "pattern" in schema and not _regex(schema["pattern"]).search(value):
        yield Finding(
            path,
            f"Invalid value: {_quoted(value)}: {path} in body should match '{schema['pattern']}'",
        )


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _quoted(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return _number(value) if isinstance(value, int | float) else json.dumps(value)


def _number(value: Any) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


# -- containers --------------------------------------------------------------------------------


def _object(
    value: dict[str, Any], schema: dict[str, Any], path: str, unknown: list[Unknown]
) -> Iterator[Finding]:
    props: dict[str, Any] = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if value.get(name) is None:
            yield Finding(_join(path, name), "Required value")
    extra = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields")
    for key, item in value.items():
        at = _join(path, str(key))
        if item is None:
            continue  # the server drops a null field before validating
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if sub is not None:
            yield from _node(item, sub, at, unknown)
        elif "properties" in schema:
            unknown.append(Unknown(at, tuple(props), pruned=not preserve))


def _array(
    value: list[Any], schema: dict[str, Any], path: str, unknown: list[Unknown]
) -> Iterator[Finding]:
    limit = schema.get("maxItems")
    if limit is not None and len(value) > limit:
        yield Finding(path, f"Too many: {len(value)}: must have at most {limit} items")
    items = schema.get("items")
    for i, item in enumerate(value):
        if isinstance(items, dict):
            yield from _node(item, items, f"{path}[{i}]", unknown)
    yield from _duplicates(value, schema, path)


def _duplicates(value: list[Any], schema: dict[str, Any], path: str) -> Iterator[Finding]:
    kind = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys") or ()
    seen: set[str] = set()
    for i, item in enumerate(value):
        if kind == "map" and isinstance(item, dict):
            shown = json.dumps({k: item.get(k) for k in keys}, separators=(",", ":"))
        elif kind == "set":
            shown = json.dumps(item, separators=(",", ":"), sort_keys=True)
        else:
            continue
        if shown in seen:
            yield Finding(f"{path}[{i}]", f"Duplicate value: {shown}")
        seen.add(shown)
