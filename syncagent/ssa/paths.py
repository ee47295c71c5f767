"""Field paths of an object, as server-side apply names them, rendered readably.

A path is a tuple of elements. ``Field`` is a map key, ``Key`` an item of an associative list
(``containers[name=main]``), ``Value`` a member of a set-like list (``finalizers[=x]``) and
``Index`` a position in an atomic-keyed list. The rendering keeps the API server's shape (so a
path from a 409 conflict and a path decoded from managedFields compare as strings) but drops the
JSON quoting around plain strings: ``.spec.ports[port=8000,protocol=TCP]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

Scalar: TypeAlias = str | int | float | bool | None

_PLAIN = re.compile(r"^[A-Za-z_./:@+-][A-Za-z0-9_./:@+-]*$")
_RESERVED = {"true", "false", "null"}


@dataclass(frozen=True, slots=True)
class Field:
    name: str

    def render(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True, slots=True)
class Key:
    items: tuple[tuple[str, Scalar], ...]

    def render(self) -> str:
        return "[" + ",".join(f"{k}={render_scalar(v)}" for k, v in self.items) + "]"


@dataclass(frozen=True, slots=True)
class Value:
    value: Scalar

    def render(self) -> str:
        return f"[={render_scalar(self.value)}]"


@dataclass(frozen=True, slots=True)
class Index:
    index: int

    def render(self) -> str:
        return f"[{self.index}]"


Element: TypeAlias = Field | Key | Value | Index
FieldPath: TypeAlias = tuple[Element, ...]


def render_scalar(value: Scalar) -> str:
    """A key or set value as a reader expects it: strings bare unless that would be ambiguous."""
    if isinstance(value, str) and _PLAIN.match(value) and value not in _RESERVED:
        return value
    return json.dumps(value, separators=(",", ":"))


def render(path: FieldPath) -> str:
    return "".join(element.render() for element in path)


def readable(server_path: str) -> str:
    """Rewrite a path as the API server prints it (JSON-quoted keys) into our readable form.

    ``.spec.ports[port=8000,protocol="TCP"]`` becomes ``.spec.ports[port=8000,protocol=TCP]``.
    Field names are kept verbatim, so dotted label keys stay as the server wrote them.
    """
    out: list[str] = []
    pos = 0
    while pos < len(server_path):
        bracket = server_path.find("[", pos)
        if bracket < 0:
            out.append(server_path[pos:])
            break
        out.append(server_path[pos:bracket])
        element, pos = _parse_bracket(server_path, bracket)
        out.append(element.render())
    return "".join(out)


def parse(text: str, *, like: Any = None) -> FieldPath:
    """A path from its printed form (ours or the server's) back into elements.

    Field names may contain dots (label keys), which the printed form cannot tell apart from
    separators. With ``like`` (an object the path points into), each field name is matched
    against the keys actually present, longest first; without it, dots always separate.
    """
    elements: list[Element] = []
    node, pos = like, 0
    while pos < len(text):
        if text[pos] == "[":
            element, pos = _parse_bracket(text, pos)
        elif text[pos] == ".":
            name = _field_name(text, pos + 1, node)
            element, pos = Field(name), pos + 1 + len(name)
        else:
            raise ValueError(f"malformed field path {text!r} at {pos}")
        elements.append(element)
        node = _step(node, element)[1] if node is not None else None
    return tuple(elements)


def _field_name(text: str, start: int, node: Any) -> str:
    end = len(text)
    for stop in (text.find("[", start), text.find(".", start)):
        if stop >= 0:
            end = min(end, stop)
    if isinstance(node, dict):
        rest = re.split(r"\[", text[start:], maxsplit=1)[0]
        candidates = [k for k in node if isinstance(k, str) and _is_prefix(k, rest)]
        if candidates:
            return max(candidates, key=len)
    return text[start:end]


def _is_prefix(key: str, rest: str) -> bool:
    return rest == key or rest.startswith(key + ".") or rest.startswith(key + "[")


def _parse_bracket(text: str, start: int) -> tuple[Element, int]:
    """Parse ``[...]`` starting at ``text[start] == '['``; return the element and the end."""
    pos = start + 1
    if text.startswith("=", pos):
        value, pos = _json_at(text, pos + 1)
        return Value(value), _expect(text, pos, "]")
    digits = re.match(r"\d+\]", text[pos:])
    if digits:
        return Index(int(digits.group()[:-1])), pos + len(digits.group())
    items: list[tuple[str, Scalar]] = []
    while True:
        eq = text.index("=", pos)
        name = text[pos:eq]
        value, pos = _json_at(text, eq + 1)
        items.append((name, value))
        if text.startswith("]", pos):
            return Key(tuple(items)), pos + 1
        pos = _expect(text, pos, ",")


def _json_at(text: str, pos: int) -> tuple[Scalar, int]:
    try:
        value, end = json.JSONDecoder().raw_decode(text, pos)
    except json.JSONDecodeError:
        # Not JSON: already readable (our own rendering); read up to the next separator.
        match = re.compile(r"[^,\]]*").match(text, pos)
        assert match is not None
        return match.group(), match.end()
    return value, end


def _expect(text: str, pos: int, char: str) -> int:
    if not text.startswith(char, pos):
        raise ValueError(f"malformed field path {text!r} at {pos}: expected {char!r}")
    return pos + 1


def lookup(obj: Any, path: FieldPath) -> Iterator[Any]:
    """The value at ``path`` in a plain object (yields nothing when it is absent)."""
    node = obj
    for element in path:
        found, node = _step(node, element)
        if not found:
            return
    yield node


def value_at(obj: Any, path: FieldPath, default: Any = None) -> Any:
    return next(lookup(obj, path), default)


def _step(node: Any, element: Element) -> tuple[bool, Any]:
    if isinstance(element, Field):
        if isinstance(node, dict) and element.name in node:
            return True, node[element.name]
        return False, None
    if not isinstance(node, list):
        return False, None
    if isinstance(element, Index):
        return (True, node[element.index]) if element.index < len(node) else (False, None)
    for item in node:
        if isinstance(element, Value) and item == element.value:
            return True, item
        if isinstance(element, Key) and _matches(item, element):
            return True, item
    return False, None


def _matches(item: Any, key: Key) -> bool:
    return isinstance(item, dict) and all(item.get(k) == v for k, v in key.items)
