"""Shards: several agents split the graphs of a cluster, each with its own Lease (issue 16).

A shard is named, and owns the graphs its label selector matches (``--shard-selector``) in the
namespaces it watches (``-n``, repeatable: a namespace set). Its Lease is
``<leader-election-id>-<name>``, so each shard elects its own leader and shards never wait for
each other. A DCD of a graph is reconciled by the shard that holds the graph (a shard skips
DCDs whose graph is not in its cache); a standalone DCD by the shard whose selector matches the
DCD's own labels. Disjoint selectors (``shard in (a)``, ``shard in (b)``, or
``shard notin (a)``...) therefore never reconcile one graph twice.

The selector grammar is Kubernetes': ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``,
``k notin (a,b)``, ``k``, ``!k``, joined by commas. The API server filters the graph watch with
it; :func:`matches` applies the same selector locally (standalone DCDs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SET = re.compile(r"^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$")
_CMP = re.compile(r"^([^\s!=(),]+)\s*(==|!=|=)\s*([^\s!=(),]*)$")
_KEY = re.compile(r"^(!?)\s*([^\s!=(),]+)$")

Requirement = Callable[[Mapping[str, str]], bool]


@dataclass(frozen=True, slots=True)
class ShardSettings:
    """``name``: names the shard and its Lease ("" = not sharded). ``selector``: the label
    selector on graphs ("" = every graph)."""

    name: str = ""
    selector: str = ""

    def __post_init__(self) -> None:
        if self.selector and not self.name:
            raise ValueError("--shard-selector needs --shard-name (it names the shard's Lease)")
        if self.name and (len(self.name) > 40 or not _NAME.match(self.name)):
            raise ValueError(
                f"--shard-name {self.name!r}: use at most 40 lowercase letters, digits and '-'"
            )
        parse(self.selector)  # a bad selector fails at start, not at the first watch

    def lease_name(self, base: str) -> str:
        return f"{base}-{self.name}" if self.name else base

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return all(req(labels or {}) for req in parse(self.selector))


def parse(selector: str) -> list[Requirement]:
    """The requirements of a label selector; ValueError naming the part it cannot read."""
    return [_requirement(part.strip()) for part in _split(selector) if part.strip()]


def _split(selector: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _requirement(text: str) -> Requirement:
    if m := _SET.match(text):
        key, op, values = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if m := _CMP.match(text):
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if m := _KEY.match(text):
        negate, key = m.group(1) == "!", m.group(2)
        return lambda labels: (key in labels) != negate
    raise ValueError(f"--shard-selector: cannot read {text!r} (a Kubernetes label selector)")
