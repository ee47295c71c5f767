"""How many nodes a loaded YAML stream expands to, counted without expanding it.

YAML anchors and aliases make a document a graph: ``b: [*a, *a, ...]`` refers to ``a`` ten times
and the loader shares one object. Everything after the loader (the schema check, the models,
the renderers, the JSON encoders) walks the expansion, a tree, so a few hundred bytes of
aliases nine levels deep are a billion nodes to them (docs/bad-input.md). Here each distinct
list or mapping is visited once and its expanded size memoised, so the count costs what the
parse cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What aliases may add to a stream beyond its own nodes. The largest graphs we know (a `kind:
# List` of a namespace's graphs with managedFields) hold tens of thousands of nodes of their
# own, which no alias rule touches; this budget bounds only the repetition, so that the rest
# of the pipeline finishes a refused-or-accepted stream in well under a second.
ALIAS_BUDGET = 100_000


@dataclass(frozen=True, slots=True)
class Size:
    own: int  # nodes as written: each distinct list and mapping once, with its entries
    expanded: int  # nodes after expanding every alias (a Python int: a bomb's is astronomical)
    cyclic: bool  # a list or mapping that contains itself (an alias inside its own anchor)


def measure(value: Any) -> Size:
    """Own and expanded node counts of a loaded value (iterative: deep input must not recurse)."""
    memo: dict[int, int] = {}
    own = 1
    open_ids: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        node, done = stack.pop()
        if not isinstance(node, dict | list):
            continue
        key = id(node)
        children = list(node.values()) if isinstance(node, dict) else node
        if done:
            open_ids.discard(key)
            memo[key] = 1 + sum(_expanded(c, memo) for c in children)
            continue
        if key in memo:
            continue
        if key in open_ids:
            return Size(own=own, expanded=own, cyclic=True)
        open_ids.add(key)
        own += len(children)
        stack.append((node, True))
        stack.extend((c, False) for c in children if isinstance(c, dict | list))
    return Size(own=own, expanded=_expanded(value, memo), cyclic=False)


def _expanded(value: Any, memo: dict[int, int]) -> int:
    if isinstance(value, dict | list):
        return memo[id(value)]
    return 1


def problem(value: Any, *, budget: int = ALIAS_BUDGET) -> str | None:
    """Why a loaded stream is refused for its aliases, or None."""
    size = measure(value)
    if size.cyclic:
        return "an alias refers to the value that holds it (a cycle); replace the alias by a copy"
    added = size.expanded - size.own
    if added > budget:
        return (
            f"aliases expand it by {_count(added)} nodes (at most {budget:,} allowed); "
            "write the repeated values out or use fewer aliases"
        )
    return None


def _count(n: int) -> str:
    return f"{n:,}" if n < 10**12 else f"about 10^{len(str(n)) - 1}"
