"""``blame``: an object as YAML, each line with the managers that own it.

Ownership comes from ``metadata.managedFields`` (decoded by :mod:`syncagent.ssa.managedfields`).
A line owns what its path owns; a line inside an atomic value (an owned leaf that has members,
such as an ownerReferences item) inherits the owners of that value. List items are addressed as
server-side apply addresses them (``containers[name=main]``, ``finalizers[=x]``) and that
readable key is printed next to the item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
import yaml

from syncagent.ssa.managedfields import ManagerEntry, decode
from syncagent.ssa.paths import Element, Field, FieldPath, Index, Key, Value, render

# Item keys to try when no managedFields entry names a list item (kubectl's usual merge keys).
_FALLBACK_KEYS = ("name", "containerPort", "port", "uid", "type", "key", "ip", "mountPath")


@dataclass(frozen=True, slots=True)
class LineOwner:
    manager: str
    operation: str
    subresource: str
    time: str | None


@dataclass(frozen=True, slots=True)
class BlameLine:
    text: str
    path: FieldPath | None
    owners: tuple[LineOwner, ...] = ()
    item: str = ""  # the readable key of a list item starting on this line


@dataclass
class Ownership:
    """Owners by path, and the paths that have owned members (so are not atomic)."""

    owners: dict[FieldPath, list[LineOwner]] = field(default_factory=dict)
    parents: set[FieldPath] = field(default_factory=set)
    elements: dict[FieldPath, list[Element]] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Iterable[ManagerEntry]) -> Ownership:
        out = cls()
        for entry in entries:
            owner = LineOwner(entry.manager, entry.operation, entry.subresource, entry.time)
            for path in entry.fields:
                out.owners.setdefault(path, []).append(owner)
                for n in range(len(path)):
                    out.parents.add(path[:n])
                    if not isinstance(path[n], Field):
                        out.elements.setdefault(path[:n], []).append(path[n])
        return out

    def of_path(self, path: FieldPath) -> tuple[LineOwner, ...]:
        if path in self.owners:
            return tuple(self.owners[path])
        for n in range(len(path) - 1, 0, -1):
            prefix = path[:n]
            if prefix in self.owners and prefix not in self.parents:
                return tuple(self.owners[prefix])  # inside an atomic value
        return ()


def blame_lines(obj: Mapping[str, Any]) -> list[BlameLine]:
    """The object (without managedFields) as YAML lines with their owners."""
    shown = dict(obj)
    meta = dict(shown.get("metadata") or {})
    meta.pop("managedFields", None)
    shown["metadata"] = meta
    own = Ownership.of(decode(obj))
    lines: list[BlameLine] = []
    _emit_map(shown, (), 0, own, lines)
    return lines


def _scalar(value: Any) -> str:
    if isinstance(value, str) and ("\n" in value or len(value) > 200):
        return json.dumps(value)
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def _inline_empty(value: Any) -> str | None:
    if isinstance(value, dict | list) and not value:
        return "{}" if isinstance(value, dict) else "[]"
    if not isinstance(value, dict | list):
        return _scalar(value)
    return None


def _emit_map(
    node: Mapping[str, Any], path: FieldPath, indent: int, own: Ownership, out: list[BlameLine]
) -> None:
    pad = " " * indent
    for key in sorted(node):
        value, child = node[key], (*path, Field(key))
        inline = _inline_empty(value)
        label = _scalar(key)
        if inline is not None:
            out.append(BlameLine(f"{pad}{label}: {inline}", child, own.of_path(child)))
            continue
        out.append(BlameLine(f"{pad}{label}:", child, own.of_path(child)))
        if isinstance(value, dict):
            _emit_map(value, child, indent + 2, own, out)
        else:
            _emit_list(value, child, indent, own, out)


def _emit_list(
    items: list[Any], path: FieldPath, indent: int, own: Ownership, out: list[BlameLine]
) -> None:
    pad = " " * indent
    for i, item in enumerate(items):
        element = element_for(item, i, own.elements.get(path, []))
        child = (*path, element)
        readable = element.render()
        if isinstance(item, dict) and item:
            first, rest = _first_key(item)
            head = (*child, Field(first))
            inline = _inline_empty(item[first])
            owners = _union(own.of_path(child), own.of_path(head))
            text = f"{pad}- {_scalar(first)}:" + (f" {inline}" if inline is not None else "")
            out.append(BlameLine(text, child, owners, readable))
            if inline is None:
                _emit_value(item[first], head, indent + 2, own, out)
            _emit_map({k: item[k] for k in rest}, child, indent + 2, own, out)
        else:
            shown = _inline_empty(item)
            text = f"{pad}- {shown if shown is not None else json.dumps(item)}"
            out.append(BlameLine(text, child, own.of_path(child), readable))


def _emit_value(
    value: Any, path: FieldPath, indent: int, own: Ownership, out: list[BlameLine]
) -> None:
    if isinstance(value, dict):
        _emit_map(value, path, indent + 2, own, out)
    else:
        _emit_list(value, path, indent + 2, own, out)


def _first_key(item: Mapping[str, Any]) -> tuple[str, list[str]]:
    keys = sorted(item)
    return keys[0], keys[1:]


def _union(*groups: tuple[LineOwner, ...]) -> tuple[LineOwner, ...]:
    return tuple(dict.fromkeys(o for g in groups for o in g))


def element_for(item: Any, index: int, known: list[Element]) -> Element:
    """How server-side apply addresses list item ``item``: the key an entry uses, else a guess."""
    for element in known:
        if isinstance(element, Key) and isinstance(item, dict):
            if all(item.get(k) == v for k, v in element.items):
                return element
        elif isinstance(element, Value) and element.value == item:
            return element
    if isinstance(item, dict):
        for name in _FALLBACK_KEYS:
            if name in item and not isinstance(item[name], dict | list):
                return Key(((name, item[name]),))
        return Index(index)
    if isinstance(item, str | int | float | bool):
        return Value(item)
    return Index(index)


# -- output --------------------------------------------------------------------------------


def age(time: str | None, *, now: datetime) -> str:
    if not time:
        return "-"
    try:
        then = datetime.fromisoformat(time.replace("Z", "+00:00"))
    except ValueError:
        return "-"
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _op(owner: LineOwner) -> str:
    return owner.operation + (f"/{owner.subresource}" if owner.subresource else "")


def to_text(lines: list[BlameLine], *, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    cols = [
        (
            ",".join(o.manager for o in line.owners),
            ",".join(_op(o) for o in line.owners),
            ",".join(age(o.time, now=now) for o in line.owners),
        )
        for line in lines
    ]
    head = ("MANAGER", "OPERATION", "AGE")
    widths = [max([len(head[i])] + [len(c[i]) for c in cols]) for i in range(3)]
    out = [f"{head[0]:<{widths[0]}}  {head[1]:<{widths[1]}}  {head[2]:<{widths[2]}}  OBJECT"]
    for line, (m, op, ag) in zip(lines, cols, strict=True):
        note = f"  # {line.item}" if line.item and not line.item.startswith("[=") else ""
        out.append(f"{m:<{widths[0]}}  {op:<{widths[1]}}  {ag:<{widths[2]}}  {line.text}{note}")
    return "\n".join(out) + "\n"


def to_json(lines: list[BlameLine], *, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    doc = [
        {
            "line": line.text,
            "path": render(line.path) if line.path else "",
            "owners": [
                {
                    "manager": o.manager,
                    "operation": o.operation,
                    "subresource": o.subresource,
                    "time": o.time,
                    "age": age(o.time, now=now),
                }
                for o in line.owners
            ],
        }
        for line in lines
    ]
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def co_owned(lines: list[BlameLine]) -> list[BlameLine]:
    """Lines owned by more than one manager."""
    return [line for line in lines if len({o.manager for o in line.owners}) > 1]
