"""The deliberate differences from upstream, read from ``docs/parity.md``. Pure: no I/O.

Each difference is a ``### D<n>. <title>`` section of that file: prose giving the reason, then
one fenced block tagged ``yaml parity``::

    cases: [golden/dgd/components, dgdr/*]      # globs over parity case ids
    documents: [Deployment, LeaderWorkerSet]     # kinds of the expected documents it edits
    changes:
      - path: '**.env[name=DYN_NAMESPACE_WORKER_SUFFIX]'
        absent: true                             # we do not render it
      - path: metadata.name
        rewrite: {pattern: '^\\$glob:(.*)-\\*$', to: '\\1'}
      - path: spec.template.metadata.labels.role
        value: leader                            # we render this value instead
        where: ...                               # optional: only where the expected node equals it
      - path: data."script.py"
        exists: true                             # our own value: only its presence is compared
      - path: metadata.labels.app
        copy: spec.selector.app                  # the value another path of the document holds
      - path: metadata.annotations
        keep: [a, b]                             # only these keys stay
      - path: '**.containers[name=main].ports'
        append: {name: http, containerPort: 80}  # joins a non-empty list without that name,
        beside: {path: '*.httpGet.port', equals: http}  # where the list's holder has this
        when:                                    # optional: only where a related document has
          document: PodCliqueSet                 #   at path the value this one has at equals
          path: spec.template.cliques[name=*-ldr].labels.app
          equals: spec.selector.app

A change edits upstream's expected documents before matching, so what remains compared is
upstream's contract minus exactly the listed differences: an unlisted difference fails the
comparison. A listed difference that edits nothing in a case it names is stale and fails too.

Paths: ``.``-separated keys (``"quoted"`` when they contain dots or slashes), ``*`` (every
child), ``**`` (any depth, itself included), ``[*]`` (every list item), ``[key=value]`` (list items
whose ``key`` equals ``value``, or matches it as a glob when it has a ``*``).
"""

from __future__ import annotations

import copy
import fnmatch
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from tests.support.golden_contract import EXISTS, NOTEXISTS, STRICT

_HEADING = re.compile(r"^### (D\d+)\. (.+)$", re.MULTILINE)
_SECTION_END = re.compile(r"^#{1,3} ", re.MULTILINE)
_BLOCK = re.compile(r"^```yaml parity\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_TOKEN = re.compile(r'\.?(?:"([^"]*)"|(\*\*)|(\*)|\[\*\]|\[([^=\]]+)=([^\]]*)\]|([^."\[\]*]+))')
_UNSET = object()


class DifferencesError(ValueError):
    """``docs/parity.md`` does not describe its differences as this module reads them."""


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str  # key | any | deep | item | select
    key: str = ""
    value: str = ""


@dataclass(frozen=True, slots=True)
class When:
    """Only in a document whose value at ``this`` is found, in another document of the case of
    kind ``document``, at ``path`` (a rule that depends on a related object)."""

    document: str
    path: tuple[Segment, ...]
    this: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class Change:
    path: tuple[Segment, ...]
    text: str
    absent: bool = False
    value: Any = _UNSET
    rewrite: tuple[str, str] | None = None
    where: Any = _UNSET
    exists: bool = False
    copy: tuple[Segment, ...] = ()
    when: When | None = None
    keep: tuple[str, ...] | None = None
    append: Mapping[str, Any] | None = None
    beside: tuple[tuple[Segment, ...], Any] | None = None


@dataclass(frozen=True, slots=True)
class Difference:
    id: str
    title: str
    reason: str
    cases: tuple[str, ...]
    documents: tuple[str, ...]
    changes: tuple[Change, ...]

    def applies_to(self, case: str) -> bool:
        return any(fnmatch.fnmatchcase(case, pattern) for pattern in self.cases)


# -- reading docs/parity.md -------------------------------------------------------------------


def parse_differences(markdown: str) -> list[Difference]:
    out = []
    headings = list(_HEADING.finditer(markdown))
    for heading in headings:
        rest = markdown[heading.end() :]
        end = _SECTION_END.search(rest)
        body = rest[: end.start()] if end else rest
        out.append(_difference(heading.group(1), heading.group(2).strip(), body))
    ids = [d.id for d in out]
    if len(set(ids)) != len(ids):
        raise DifferencesError(f"duplicate difference ids in {ids}")
    return out


def _difference(ident: str, title: str, body: str) -> Difference:
    blocks = _BLOCK.findall(body)
    if len(blocks) != 1:
        raise DifferencesError(f"{ident}: needs exactly one ```yaml parity block")
    reason = " ".join(_BLOCK.sub("", body).split())
    if not reason:
        raise DifferencesError(f"{ident}: the reason (prose before the block) is missing")
    data = yaml.safe_load(blocks[0]) or {}
    unknown = set(data) - {"cases", "documents", "changes"}
    if unknown or not data.get("cases") or not data.get("changes"):
        raise DifferencesError(f"{ident}: needs cases and changes (unknown keys: {unknown})")
    return Difference(
        id=ident,
        title=title,
        reason=reason,
        cases=tuple(str(c) for c in data["cases"]),
        documents=tuple(str(d) for d in data.get("documents") or ()),
        changes=tuple(_change(ident, c) for c in data["changes"]),
    )


def _change(ident: str, data: Mapping[str, Any]) -> Change:
    kinds = ("absent", "value", "rewrite", "exists", "copy", "keep", "append")
    unknown = set(data) - {"path", "where", "when", "beside", *kinds}
    actions = [k for k in kinds if k in data]
    if unknown or len(actions) != 1 or "path" not in data:
        raise DifferencesError(f"{ident}: a change needs a path and one of {'/'.join(kinds)}")
    for flag in ("absent", "exists"):
        if flag in data and data[flag] is not True:
            raise DifferencesError(f"{ident}: {flag} must be true")
    rewrite = data.get("rewrite")
    return Change(
        path=parse_path(str(data["path"])),
        text=str(data["path"]),
        absent="absent" in data,
        value=data.get("value", _UNSET),
        rewrite=(str(rewrite["pattern"]), str(rewrite["to"])) if rewrite else None,
        where=data.get("where", _UNSET),
        exists="exists" in data,
        copy=parse_path(str(data["copy"])) if "copy" in data else (),
        when=_when(ident, data["when"]) if "when" in data else None,
        keep=tuple(str(k) for k in data["keep"]) if "keep" in data else None,
        append=dict(data["append"]) if "append" in data else None,
        beside=_beside(ident, data["beside"]) if "beside" in data else None,
    )


def _beside(ident: str, data: Any) -> tuple[tuple[Segment, ...], Any]:
    if not isinstance(data, dict) or set(data) != {"path", "equals"}:
        raise DifferencesError(f"{ident}: beside needs path and equals")
    return parse_path(str(data["path"])), data["equals"]


def _when(ident: str, data: Any) -> When:
    if not isinstance(data, dict) or set(data) != {"document", "path", "equals"}:
        raise DifferencesError(f"{ident}: when needs document, path and equals")
    return When(
        str(data["document"]), parse_path(str(data["path"])), parse_path(str(data["equals"]))
    )


def parse_path(text: str) -> tuple[Segment, ...]:
    segments, pos = [], 0
    while pos < len(text):
        token = _TOKEN.match(text, pos)
        if token is None or (pos == 0 and text.startswith(".")):
            raise DifferencesError(f"bad path {text!r} at {pos}")
        quoted, deep, star, sel_key, sel_value, bare = token.groups()
        if quoted is not None or bare is not None:
            segments.append(Segment("key", quoted if quoted is not None else bare))
        elif deep:
            segments.append(Segment("deep"))
        elif star:
            segments.append(Segment("any"))
        elif sel_key is not None:
            segments.append(Segment("select", sel_key, sel_value))
        else:
            segments.append(Segment("item"))
        pos = token.end()
    if not segments:
        raise DifferencesError("empty path")
    return tuple(segments)


# -- editing expectations ---------------------------------------------------------------------


Step = tuple[Any, Any]  # (container, key): one step from the document root


def _children(node: Any) -> Iterator[Step]:
    if isinstance(node, dict):
        yield from ((node, k) for k in list(node))
    elif isinstance(node, list):
        yield from ((node, i) for i in range(len(node)))


def _targets(
    node: Any, path: Sequence[Segment], chain: tuple[Step, ...] = ()
) -> Iterator[tuple[Step, ...]]:
    """The steps from the root to every node the path selects; a final plain key may be
    absent (a ``value`` change creates it)."""
    head, rest = path[0], path[1:]
    if head.kind == "deep":
        if rest:
            yield from _targets(node, rest, chain)
        for step in _children(node):
            yield from _targets(step[0][step[1]], path, (*chain, step))
        return
    if head.kind == "key":
        steps = [(node, head.key)] if isinstance(node, dict) else []
        if rest:
            steps = [(c, k) for c, k in steps if k in c]
    elif head.kind == "any":
        steps = list(_children(node))
    elif head.kind == "item":
        steps = list(_children(node)) if isinstance(node, list) else []
    else:
        steps = [
            (node, i)
            for i, item in enumerate(node if isinstance(node, list) else [])
            if isinstance(item, dict) and _selects(item.get(head.key), head.value)
        ]
    for container, key in steps:
        if rest:
            yield from _targets(container[key], rest, (*chain, (container, key)))
        else:
            yield (*chain, (container, key))


def _selects(value: Any, pattern: str) -> bool:
    """``[key=value]``: equality, or a glob when the value has a ``*`` (a generated graph's
    clique names vary: ``[name=*-ldr]``)."""
    if value is None:
        return False
    if "*" in pattern:
        return fnmatch.fnmatchcase(str(value), pattern)
    return str(value) == pattern


def _selected(doc: Mapping[str, Any], documents: Sequence[str]) -> bool:
    """``documents``: kinds, or ``Kind/name-glob`` (``Service/dynamo-model-*``)."""
    if not documents:
        return True
    kind, name = doc.get("kind"), str((doc.get("metadata") or {}).get("name"))
    return any(
        entry == kind
        or (entry.partition("/")[0] == kind and fnmatch.fnmatchcase(name, entry.partition("/")[2]))
        for entry in documents
    )


def apply_differences(
    docs: Sequence[Mapping[str, Any]], differences: Sequence[Difference]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Copies of ``docs`` edited by every difference, and how many edits each one made."""
    edited = [copy.deepcopy(dict(d)) for d in docs]
    counts = {d.id: 0 for d in differences}
    for difference in differences:
        for doc in edited:
            if _selected(doc, difference.documents):
                for change in difference.changes:
                    if change.when is None or _holds(change.when, doc, edited):
                        counts[difference.id] += _apply(doc, change)
    return edited, counts


def _values(doc: Mapping[str, Any], path: Sequence[Segment]) -> list[Any]:
    return [c[-1][0][c[-1][1]] for c in _targets(doc, path) if _has(c)]


def _holds(when: When, doc: Mapping[str, Any], docs: Sequence[Mapping[str, Any]]) -> bool:
    wanted = _values(doc, when.this)
    return bool(wanted) and any(
        value == wanted[0]
        for other in docs
        if other.get("kind") == when.document
        for value in _values(other, when.path)
    )


def _apply(doc: dict[str, Any], change: Change) -> int:
    if change.keep is not None or change.append is not None:
        return sum(_edit_collection(chain, change) for chain in list(_targets(doc, change.path)))
    if change.copy:
        sources = _values(doc, change.copy)
        if not sources:
            return 0
        _ensure_mappings(doc, change.path[:-1])
        change = Change(path=change.path, text=change.text, value=sources[0], where=change.where)
    done = 0
    removals: list[Step] = []
    for chain in list(_targets(doc, change.path)):
        container, key = chain[-1]
        present = key in container if isinstance(container, dict) else True
        current = container[key] if present else _UNSET
        if change.where is not _UNSET and current != change.where:
            continue
        if change.absent:
            if not present:
                continue
            if isinstance(container, list):
                removals.append((container, key))
            else:
                container[key] = NOTEXISTS
                _prune(chain)
        elif change.exists:
            if not present or current == EXISTS:
                continue
            container[key] = EXISTS
        elif change.rewrite:
            if not isinstance(current, str):
                continue
            new = re.sub(change.rewrite[0], change.rewrite[1], current)
            if new == current:
                continue
            container[key] = new
        else:
            container[key] = copy.deepcopy(change.value)
        done += 1
    for container, index in sorted(removals, key=lambda r: r[1], reverse=True):
        del container[index]
    return done


def _edit_collection(chain: Sequence[Step], change: Change) -> int:
    """``keep``: only those keys of a mapping stay. ``append``: the item joins a non-empty list
    holding no item of its name, when the mapping holding the list has ``beside.path`` equal
    to ``beside.equals``."""
    container, key = chain[-1]
    node = container[key] if _has(chain) else None
    if change.keep is not None and isinstance(node, dict):
        dropped = [k for k in node if k not in change.keep and k != STRICT]
        for k in dropped:
            del node[k]
        return int(bool(dropped))
    item = change.append
    if item is None or not isinstance(node, list) or not node:
        return 0
    if any(isinstance(i, dict) and i.get("name") == item.get("name") for i in node):
        return 0
    if change.beside is not None:
        path, wanted = change.beside
        if not isinstance(container, dict) or wanted not in _values(container, path):
            return 0
    node.append(copy.deepcopy(dict(item)))
    return 1


def _ensure_mappings(doc: dict[str, Any], path: Sequence[Segment]) -> None:
    """Creates the mappings a path of plain keys leads through (Go omits an empty ``labels``),
    so that a copied value has a place to go."""
    node: Any = doc
    for segment in path:
        if segment.kind != "key" or not isinstance(node, dict):
            return
        node = node.setdefault(segment.key, {})


def _has(chain: Sequence[Step]) -> bool:
    container, key = chain[-1]
    return key in container if isinstance(container, dict) else True


def _prune(chain: Sequence[Step]) -> None:
    """A mapping left with nothing but absent fields is absent itself (we render no empty
    mappings), up the chain of mappings."""
    for container, key in reversed(chain[:-1]):
        node = container[key]
        fields = [v for k, v in node.items() if k != STRICT] if isinstance(node, dict) else [1]
        if isinstance(container, list) or not all(v == NOTEXISTS for v in fields):
            return
        container[key] = NOTEXISTS
