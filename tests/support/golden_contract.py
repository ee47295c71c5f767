"""Upstream's golden manifest contracts, matched as upstream matches them. Pure: no I/O.

The Dynamo operator (ai-dynamo/dynamo ``deploy/operator/internal/testing/golden``, DESIGN.md,
match.go, node.go) stores expected objects as YAML with directives:

- mappings are strict (no unlisted actual field) unless they carry ``$strict: false``, which
  relaxes only that mapping; ``$$strict`` escapes a real ``$strict`` field;
- scalar strings ``$ignore``/``$exists`` (the field exists, any scalar), ``$notexists`` (the field
  is absent), ``$glob:<glob>`` (Go ``path.Match``), ``$pattern:<regexp>`` (anchored),
  ``$var:<name>`` (the caller's value, compared literally, to a string only);
- one-key mappings ``{$ignore: true}``, ``{$exists: true}``, ``{$notexists: true}``;
- sequences match exactly and in order; other scalars match by value and YAML type.

Upstream parses with a YAML 1.2 library, so :func:`load_contract` resolves plain scalars with
the YAML 1.2 core schema (``no``, ``on``, ``0755``, ``1:20`` stay strings). A comparison
collects every mismatch, not only the first; a contract matches exactly when upstream's would.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

STRICT = "$strict"
ESCAPED_STRICT = "$$strict"
IGNORE, EXISTS, NOTEXISTS = "$ignore", "$exists", "$notexists"
GLOB, PATTERN, VAR = "$glob:", "$pattern:", "$var:"


class ContractError(ValueError):
    """A contract upstream's matcher would reject as malformed (not a mismatch)."""


@dataclass(frozen=True, slots=True)
class Bound:
    """A resolved ``$var:<name>``: matches exactly this string, never as a directive."""

    name: str
    value: str


# -- loading ----------------------------------------------------------------------------------


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema plain scalars (what go-yaml v3 resolves)."""


_Yaml12Loader.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
):
    _Yaml12Loader.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(_regexp), list(_first)
    )


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 16) if text.startswith("0x") else int(text, 10)


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Yaml12Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def parse_yaml(text: str) -> list[Any]:
    """Every document of ``text``, plain scalars resolved as YAML 1.2 core does."""
    return list(yaml.load_all(text, Loader=_Yaml12Loader))


def load_contract(text: str) -> list[dict[str, Any]]:
    """Every non-empty document of a contract file; each must be a mapping with
    ``apiVersion`` and ``kind``."""
    documents = [d for d in parse_yaml(text) if d is not None]
    for i, doc in enumerate(documents, start=1):
        if not isinstance(doc, dict):
            raise ContractError(f"document {i}: manifest root must be a mapping")
        for field in ("apiVersion", "kind"):
            if not isinstance(doc.get(field), str):
                raise ContractError(f"document {i}: {field} is required")
    if not documents:
        raise ContractError("golden manifest file contains no objects")
    return documents


def bind_variables(node: Any, variables: Mapping[str, str]) -> Any:
    """``node`` with every ``$var:<name>`` replaced by its :class:`Bound` value."""
    if isinstance(node, str) and node.startswith(VAR):
        name = node[len(VAR) :]
        if name not in variables:
            raise ContractError(f"unknown variable {name!r}")
        return Bound(name, variables[name])
    if isinstance(node, dict):
        return {k: bind_variables(v, variables) for k, v in node.items()}
    if isinstance(node, list):
        return [bind_variables(v, variables) for v in node]
    return node


# -- matching one node ------------------------------------------------------------------------


def is_not_exists(node: Any) -> bool:
    return node == NOTEXISTS or _mapping_directive(node) == NOTEXISTS


def _mapping_directive(node: Any) -> str | None:
    if not isinstance(node, dict) or len(node) != 1:
        return None
    ((key, value),) = node.items()
    if key not in (IGNORE, EXISTS, NOTEXISTS):
        return None
    if value is not True:
        raise ContractError(f"directive {key} must be true")
    return str(key)


def _kind(node: Any) -> str:
    if isinstance(node, dict):
        return "mapping"
    if isinstance(node, list):
        return "sequence"
    return "scalar"


def match(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Every mismatch of ``actual`` against the contract node ``expected`` (empty: match)."""
    directive = _mapping_directive(expected)
    if directive in (IGNORE, EXISTS):
        return [] if isinstance(actual, dict) else [f"{path}: expected a mapping"]
    if directive == NOTEXISTS:
        return [f"{path}: field exists"]
    if isinstance(expected, Bound):
        return _match_bound(expected, actual, path)
    if _kind(expected) != _kind(actual):
        return [f"{path}: node kind is {_kind(actual)}, want {_kind(expected)}"]
    if isinstance(expected, dict):
        return _match_mapping(expected, actual, path)
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return [f"{path}: sequence has {len(actual)} entries, want {len(expected)}"]
        return [
            problem
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for problem in match(e, a, f"{path}[{i}]")
        ]
    return _match_scalar(expected, actual, path)


def _strict(expected: Mapping[str, Any]) -> bool:
    if STRICT not in expected:
        return True
    value = expected[STRICT]
    if not isinstance(value, bool):
        raise ContractError("directive $strict must be a boolean")
    return value


def _fields(expected: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in expected.items():
        if key == STRICT:
            continue
        out[STRICT if key == ESCAPED_STRICT else str(key)] = value
    return out


def _match_mapping(expected: Mapping[str, Any], actual: Mapping[str, Any], path: str) -> list[str]:
    strict = _strict(expected)
    fields = _fields(expected)
    problems: list[str] = []
    for name, want in fields.items():
        if name not in actual:
            if not is_not_exists(want):
                problems.append(f"{path}.{name}: field does not exist")
        elif is_not_exists(want):
            problems.append(f"{path}.{name}: field exists")
        else:
            problems += match(want, actual[name], f"{path}.{name}")
    if strict:  # a present field the contract says must not exist is reported above
        problems += [f"{path}.{name}: unexpected field" for name in actual if name not in fields]
    return problems


def _match_bound(expected: Bound, actual: Any, path: str) -> list[str]:
    if not isinstance(actual, str):
        return [f"{path}: variable requires a string"]
    if actual != expected.value:
        return [f"{path}: value is {actual!r}, want {expected.value!r} (${expected.name})"]
    return []


def _match_scalar(expected: Any, actual: Any, path: str) -> list[str]:
    if isinstance(expected, str):
        if expected in (IGNORE, EXISTS):
            return []  # both are scalars here
        if expected == NOTEXISTS:
            return [f"{path}: field exists"]
        for prefix, matcher in ((GLOB, glob_match), (PATTERN, pattern_match)):
            if expected.startswith(prefix):
                if not isinstance(actual, str):
                    return [f"{path}: {prefix[1:-1]} requires a string"]
                if not matcher(expected[len(prefix) :], actual):
                    return [f"{path}: {actual!r} does not match {expected!r}"]
                return []
    # Go decodes both scalars and compares with reflect.DeepEqual: the type counts.
    if type(expected) is not type(actual) or expected != actual:
        return [f"{path}: value is {actual!r}, want {expected!r}"]
    return []


def pattern_match(pattern: str, value: str) -> bool:
    try:
        return re.fullmatch(f"(?:{pattern})", value) is not None
    except re.error as err:
        raise ContractError(f"invalid pattern {pattern!r}: {err}") from None


def glob_match(pattern: str, value: str) -> bool:
    """Go ``path.Match``: ``*`` and ``?`` never match ``/``; ``[^…]`` negates; ``\\`` escapes."""
    return re.fullmatch(_glob_regex(pattern), value, flags=re.DOTALL) is not None


def _glob_regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\":
            if i + 1 == len(pattern):
                raise ContractError(f"invalid glob {pattern!r}: trailing backslash")
            i += 1
            out.append(re.escape(pattern[i]))
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                raise ContractError(f"invalid glob {pattern!r}: unterminated class")
            body = pattern[i + 1 : end]
            negate = body.startswith("^")
            members = re.escape(body[1:] if negate else body).replace(r"\-", "-")
            out.append(f"[{'^/' if negate else ''}{members}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


# -- matching manifest sets (upstream compare) ------------------------------------------------


def _gvk(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion")), str(obj.get("kind"))


def _name(obj: Mapping[str, Any]) -> Any:
    return (obj.get("metadata") or {}).get("name")


def compare_manifests(
    expected: Sequence[Mapping[str, Any]],
    actual: Iterable[Mapping[str, Any]],
    *,
    namespace: str,
) -> list[str]:
    """Upstream ``compare``: for each apiVersion+kind in ``expected``, the actual objects of it
    must be exactly the expected set, each expected document matching exactly one object."""
    by_gvk: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for obj in actual:
        by_gvk.setdefault(_gvk(obj), []).append(obj)
    problems: list[str] = []
    for gvk in sorted({_gvk(doc) for doc in expected}):
        objects = sorted(by_gvk.get(gvk, []), key=lambda o: str(_name(o)))
        docs = [doc for doc in expected if _gvk(doc) == gvk]
        problems += _compare_kind(docs, objects, namespace=namespace)
    return problems


def _compare_kind(
    docs: Sequence[Mapping[str, Any]], objects: Sequence[Mapping[str, Any]], *, namespace: str
) -> list[str]:
    problems: list[str] = []
    claimed: dict[int, int] = {}
    all_matched = True
    for i, doc in enumerate(docs):
        what = f"{doc['kind']} {namespace}/{_name(doc)}"
        matches = [j for j, obj in enumerate(objects) if not match(doc, obj)]
        if len(matches) == 1 and matches[0] not in claimed:
            claimed[matches[0]] = i
            continue
        all_matched = False
        if len(matches) > 1:
            names = ", ".join(_describe(objects[j]) for j in matches)
            problems.append(f"{what} matches {len(matches)} objects, want exactly one: {names}")
        elif matches:
            problems.append(f"{what} and document {claimed[matches[0]] + 1} match the same object")
        else:
            problems.append(_no_match(what, doc, objects))
    if all_matched:
        problems += [
            f"unexpected {_describe(obj)} is present"
            for j, obj in enumerate(objects)
            if j not in claimed
        ]
    return problems


def _no_match(what: str, doc: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]) -> str:
    name = _name(doc)
    candidates = [
        obj for obj in objects if name is None or not match(name, _name(obj), "$.metadata.name")
    ]
    if not candidates:
        return f"{what} has not appeared"
    lead = f"{what} does not match:"
    if len(candidates) > 1:
        lead = (
            f"{what} has {len(candidates)} name-matching candidates; "
            f"{_describe(candidates[0])} does not match:"
        )
    return "\n  ".join([lead, *match(doc, candidates[0])])


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind')} {meta.get('namespace', '')}/{meta.get('name')}"
