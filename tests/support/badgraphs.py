"""Invalid graphs for the bad-input fuzz suite: hypothesis strategies over the shipped examples.

Each :class:`BadGraph` is a valid example graph (``examples/*.yaml``) with one mutation at a
known JSON path, and the outcome every consumer must produce for it:

- ``reject``: ``render``/``convert`` exit 1 and the agent reports a validation problem; the
  one-line message names ``path`` (wrong types, values out of range, unicode where a pattern or
  enum rules, a missing required field, deep nesting);
- ``warn``: an unknown field, kept or dropped; the outcome names ``path`` as unknown.

Where a mutation lands is chosen from the structural schema of our CRD (the same schema the
API server enforces), so "invalid" is decided by the schema a real server uses, not by the
code under test. Shared by the unit tier (offline, in-process) and the cluster tier (the same
graphs against a real API server and the running agent).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from syncagent.api import crdgen

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = tuple(sorted((REPO / "examples").glob("*.yaml")))
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class BadGraph:
    kind: str  # wrong-type, huge, unicode, missing, deep, unknown
    path: str  # the JSON path the outcome must name
    doc: dict[str, Any]
    source: str  # the example it came from

    @property
    def expect(self) -> str:
        return "warn" if self.kind == "unknown" else "reject"


@functools.cache
def examples() -> tuple[dict[str, Any], ...]:
    docs = [yaml.safe_load(p.read_text()) for p in EXAMPLES]
    return tuple(d for d in docs if d and d.get("kind") == "DynamoGraphDeployment")


@functools.cache
def graph_schema() -> dict[str, Any]:
    crd = crdgen.graph_crd()
    (served,) = [v for v in crd["spec"]["versions"] if v["served"]]
    return served["schema"]["openAPIV3Schema"]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@dataclass(frozen=True)
class Slot:
    """A place in an example: an object at ``path`` (a list of keys) and one declared field."""

    keys: tuple[str | int, ...]
    path: str
    field: str
    schema: dict[str, Any]
    present: bool


def slots(doc: dict[str, Any]) -> list[Slot]:
    """Every declared field of every object of ``doc`` (present or not), outside ``status``."""
    out: list[Slot] = []
    stack: list[tuple[Any, dict[str, Any], tuple[str | int, ...], str]] = [
        (doc, graph_schema(), (), "")
    ]
    while stack:
        value, schema, keys, path = stack.pop()
        if isinstance(value, dict) and "properties" in schema:
            for name, sub in schema["properties"].items():
                if not keys and name in ("status", "apiVersion", "kind", "metadata"):
                    continue
                out.append(Slot(keys, path, name, sub, name in value))
                if name in value:
                    stack.append((value[name], sub, (*keys, name), _join(path, name)))
        elif isinstance(value, list) and isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                stack.append((item, schema["items"], (*keys, i), f"{path}[{i}]"))
    return sorted(out, key=lambda s: (s.path, s.field))


def _get(doc: Any, keys: tuple[str | int, ...]) -> Any:
    for key in keys:
        doc = doc[key]
    return doc


def _wrong_values(schema: dict[str, Any]) -> list[Any]:
    """Values of a JSON type the schema refuses."""
    if schema.get("x-kubernetes-int-or-string"):
        return [True, [1], {"a": 1}, 1.5]
    kind = schema.get("type")
    table: dict[str, list[Any]] = {
        "string": [7, True, ["x"], {"a": "b"}],
        "integer": ["3", True, [1], {"a": 1}, 1.5],
        "number": ["3", True, [1]],
        "boolean": ["yes", 1, [True], {"a": 1}],
        "array": ["x", 1, True, {"a": 1}],
        "object": ["x", 1, True, [1]],
    }
    return table.get(str(kind), [])


@st.composite
def bad_graphs(draw: st.DrawFn) -> BadGraph:
    base = draw(st.sampled_from(examples()))
    doc = copy.deepcopy(base)
    name = draw(st.sampled_from(["wrong-type", "huge", "unicode", "missing", "deep", "unknown"]))
    maker = {
        "wrong-type": _wrong_type,
        "huge": _huge,
        "unicode": _unicode,
        "missing": _missing,
        "deep": _deep,
        "unknown": _unknown,
    }[name]
    path = maker(draw, doc)
    return BadGraph(name, path, doc, source=str(base["metadata"]["name"]))


def _pick(draw: st.DrawFn, candidates: list[Slot]) -> Slot:
    return draw(st.sampled_from(candidates))


def _set(doc: dict[str, Any], slot: Slot, value: Any) -> str:
    _get(doc, slot.keys)[slot.field] = value
    return _join(slot.path, slot.field)


def _wrong_type(draw: st.DrawFn, doc: dict[str, Any]) -> str:
    slot = _pick(draw, [s for s in slots(doc) if _wrong_values(s.schema)])
    return _set(doc, slot, draw(st.sampled_from(_wrong_values(slot.schema))))


def _huge(draw: st.DrawFn, doc: dict[str, Any]) -> str:
    ints = [s for s in slots(doc) if s.schema.get("type") == "integer"]
    slot = _pick(draw, ints)
    if slot.schema.get("format") == "int32":
        value = draw(st.integers(min_value=_INT32_MAX + 2, max_value=2**80))
    else:  # int64 or unformatted: beyond what any JSON integer field takes
        value = draw(st.integers(min_value=2**64, max_value=2**100))
    return _set(doc, slot, draw(st.sampled_from([value, -value])))


_UNICODE = st.text(
    alphabet=st.characters(min_codepoint=0xA0, max_codepoint=0x2FFF, categories=["L", "S"]),
    min_size=1,
    max_size=12,
)


def _unicode(draw: st.DrawFn, doc: dict[str, Any]) -> str:
    ruled = [
        s
        for s in slots(doc)
        if s.schema.get("type") == "string" and ("pattern" in s.schema or "enum" in s.schema)
    ]
    choices = ["metadata.name", *range(len(ruled))]
    choice = draw(st.sampled_from(choices))
    text = draw(_UNICODE)
    if choice == "metadata.name":
        doc["metadata"]["name"] = f"g{text}"
        return "metadata.name"
    return _set(doc, ruled[int(choice)], f"a{text}")


def _missing(draw: st.DrawFn, doc: dict[str, Any]) -> str:
    required = [s for s in slots(doc) if s.present and _required(doc, s)]
    mains = [
        (ci, ki)
        for ci, comp in enumerate(doc["spec"]["components"])
        for ki, c in enumerate(comp["podTemplate"]["spec"]["containers"])
        if c.get("name") == "main"
    ]
    choice = draw(st.sampled_from(["schema", "main-image", "name"]))
    if choice == "schema" and required:
        slot = _pick(draw, required)
        del _get(doc, slot.keys)[slot.field]
        return _join(slot.path, slot.field)
    if choice == "main-image":
        ci, ki = draw(st.sampled_from(mains))
        del doc["spec"]["components"][ci]["podTemplate"]["spec"]["containers"][ki]["image"]
        return f"spec.components[{ci}].podTemplate"  # rule V5 names the template
    del doc["metadata"]["name"]
    return "metadata.name"


def _required(doc: dict[str, Any], slot: Slot) -> bool:
    parent = _schema_at(slot.keys)
    return slot.field in (parent.get("required") or ())


def _schema_at(keys: tuple[str | int, ...]) -> dict[str, Any]:
    schema = graph_schema()
    for key in keys:
        schema = schema["items"] if isinstance(key, int) else schema["properties"][key]
    return schema


def _deep(draw: st.DrawFn, doc: dict[str, Any]) -> str:
    slot = _pick(draw, [s for s in slots(doc) if s.present])
    depth = draw(st.integers(min_value=70, max_value=400))
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value} if draw(st.booleans()) else [value]
    return _set(doc, slot, value)


def _unknown(draw: st.DrawFn, doc: dict[str, Any]) -> str:
    objects = [s for s in slots(doc) if s.present and "properties" in s.schema]
    slot = _pick(draw, objects)
    holder = _get(doc, (*slot.keys, slot.field))
    if not isinstance(holder, dict):
        holder = {}
    known = set(slot.schema["properties"])
    base = draw(st.sampled_from(sorted(known)))
    typo = draw(st.sampled_from([base + "z", base[:-1], base.upper(), "x" + base]))
    if typo in known or typo in _UPSTREAM_FIELDS:
        typo = f"{base}Typo"
    holder[typo] = draw(st.sampled_from([1, "x", True]))
    _get(doc, slot.keys)[slot.field] = holder
    return _join(_join(slot.path, slot.field), typo)


# Upstream fields our CRD keeps without declaring (spec/api.md §1.3): never a "typo".
_UPSTREAM_FIELDS = frozenset(
    {
        "compilationCache",
        "frontendSidecar",
        "providerOverride",
        "runtimeVersionOverride",
        "topologyConstraint",
        "priorityClassName",
        "experimental",
        "failover",
        "gpuMemoryService",
        "grove",
        "leader",
        "worker",
        "deletionPolicy",
        "identity",
        "mode",
        "targetContainerName",
    }
)
