"""Raw ``fieldsV1`` sets as the API server stores them: select, subtract, merge, count.

A set nests one JSON object per path element (``f:<name>``, ``k:<json>``, ``v:<json>``,
``i:<n>``); a ``"."`` member marks the node itself as owned, and an empty object is an owned
leaf. These functions work on that encoding directly, so what they return can be written back
into ``managedFields`` unchanged.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from syncagent.ssa.managedfields import decode_element
from syncagent.ssa.paths import Field, Value

FieldsV1 = dict[str, Any]


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """A part of an object's fields, named from the top.

    ``path``: field names down to a node (``("spec",)``, ``("metadata", "labels")``). Without
    ``prefix`` or ``item``, the whole subtree at that node. With ``prefix``, only the members of
    that map or set whose key (label key, finalizer...) starts with it. With ``item``, only the
    items of that associative list whose live value has, for each ``(field, allowed)`` pair,
    its ``field`` among ``allowed`` (owner references of some kinds, say).
    """

    path: tuple[str, ...]
    prefix: str | None = None
    item: tuple[tuple[str, frozenset[str]], ...] = ()

    def select(self, fields: Mapping[str, Any], *, live: Mapping[str, Any]) -> FieldsV1:
        """The part of ``fields`` (one entry's set) this selector names; empty if none."""
        node: Any = fields
        live_node: Any = live
        for name in self.path:
            if not isinstance(node, Mapping) or f"f:{name}" not in node:
                return {}
            node = node[f"f:{name}"]
            live_node = live_node.get(name) if isinstance(live_node, Mapping) else None
        if self.prefix is None and not self.item:
            picked: Any = copy.deepcopy(node)
        else:
            picked = {
                key: copy.deepcopy(child)
                for key, child in (node or {}).items()
                if key != "." and self._member(key, live_node)
            }
            if not picked:
                return {}
        for name in reversed(self.path):
            picked = {f"f:{name}": picked}
        return picked

    def _member(self, raw: str, live_node: Any) -> bool:
        if self.prefix is not None and not _key_text(raw).startswith(self.prefix):
            return False
        if self.item:
            found = _live_item(raw, live_node)
            return found is not None and all(
                str(found.get(name)) in allowed for name, allowed in self.item
            )
        return True


def _key_text(raw: str) -> str:
    """The key a member stands for: a map key (``f:``) or a set value (``v:``)."""
    element = decode_element(raw)
    if isinstance(element, Field):
        return element.name
    if isinstance(element, Value):
        return str(element.value)
    return ""


def _live_item(raw: str, live_list: Any) -> Mapping[str, Any] | None:
    """The live list item a ``k:{...}`` member names."""
    if not raw.startswith("k:") or not isinstance(live_list, list):
        return None
    key = json.loads(raw[2:])
    for item in live_list:
        if isinstance(item, Mapping) and all(item.get(k) == v for k, v in key.items()):
            return item
    return None


def subtract(a: Mapping[str, Any], b: Mapping[str, Any]) -> FieldsV1:
    """``a`` without what ``b`` owns. A node the removal leaves with no member goes too: an
    empty object would read as an owned leaf, and owning only the node (``"."``) of a map or
    list whose members all went elsewhere would keep an entry alive for nothing."""
    out: FieldsV1 = {}
    for key, ours in a.items():
        if key not in b:
            out[key] = copy.deepcopy(ours)
            continue
        theirs = b[key]
        if not theirs or not ours:
            continue  # a leaf, or a whole subtree, taken
        rest = subtract(ours, theirs)
        if set(rest) - {"."}:
            out[key] = rest
    return out


def merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> FieldsV1:
    """The union of two sets.

    When one side owns a node as a leaf and the other owns members below it, the union owns
    both: the node (``"."``) and the members.
    """
    out = copy.deepcopy(dict(a))
    for key, theirs in b.items():
        if key not in out:
            out[key] = copy.deepcopy(theirs)
            continue
        ours = out[key]
        if ours == theirs:
            continue
        if not ours or not theirs:
            out[key] = {".": {}, **(ours or {}), **copy.deepcopy(theirs or {})}
        else:
            out[key] = merge(ours, theirs)
    return out


def count(fields: Mapping[str, Any]) -> int:
    """Owned leaves and owned nodes (``"."``) in a set."""
    total = 0
    for key, child in fields.items():
        if key == "." or not child:
            total += 1
        else:
            total += count(child)
    return total
