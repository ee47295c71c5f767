"""Readable field paths (``.spec.ports[port=8000,protocol=TCP].targetPort``) against objects.

The readable form is ambiguous where a map key contains dots (label keys such as
``nvidia.com/dynamo-component``), so a path is resolved against the object it addresses: at a
map, the longest key that matches the remaining text wins.
"""

from __future__ import annotations

import json
import re
from typing import Any

from syncagent.ssa.paths import render_scalar

_MISSING = object()


def value_at(obj: Any, path: str) -> tuple[bool, Any]:
    """``(found, value)`` of a readable path in a plain object."""
    node, rest = obj, path
    while rest:
        if rest.startswith("."):
            if not isinstance(node, dict):
                return False, None
            key = _longest_key(node, rest[1:])
            if key is None:
                return False, None
            node, rest = node[key], rest[1 + len(key) :]
        elif rest.startswith("["):
            end = _bracket_end(rest)
            found, node = _item(node, rest[1:end])
            if not found:
                return False, None
            rest = rest[end + 1 :]
        else:
            return False, None
    return True, node


def _longest_key(node: dict[str, Any], text: str) -> str | None:
    found = [k for k in node if text == k or text.startswith((k + ".", k + "["))]
    return max(found, key=len) if found else None


def _bracket_end(text: str) -> int:
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "[":
            depth += 1
        elif not quoted and ch == "]":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"malformed field path {text!r}")


def _item(node: Any, inner: str) -> tuple[bool, Any]:
    if not isinstance(node, list):
        return False, None
    if inner.isdigit():
        i = int(inner)
        return (True, node[i]) if i < len(node) else (False, None)
    if inner.startswith("="):
        for item in node:
            if render_scalar(item) == inner[1:] or json.dumps(item) == inner[1:]:
                return True, item
        return False, None
    pairs = _pairs(inner)
    for item in node:
        if isinstance(item, dict) and all(_same(item.get(k, _MISSING), v) for k, v in pairs):
            return True, item
    return False, None


_PAIR = re.compile(r'([^=,]+)=("(?:[^"\\]|\\.)*"|[^,]*)')


def _pairs(inner: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _PAIR.finditer(inner)]


def _same(value: Any, text: str) -> bool:
    if value is _MISSING:
        return False
    return render_scalar(value) == text or json.dumps(value) == text


def show(found: bool, value: Any) -> str:
    """A value for a table cell: compact JSON, ``(absent)`` when not set."""
    if not found:
        return "(absent)"
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
