"""Parse YAML/JSON manifests into models, with one-line errors for the CLI.

Skip rule: in a multi-document stream only ``DynamoGraphDeployment`` and
``DynamoComponentDeployment`` documents of group ``nvidia.com`` are parsed; every other
document (ConfigMap, PVC, ...) is skipped. A v1alpha1 DGD/DCD is an error that points to
``syncagent convert``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from syncagent.api import expansion
from syncagent.api.component import (
    API_VERSION,
    DCD_KIND,
    GROUP,
    DynamoComponentDeployment,
)
from syncagent.api.graph import DGD_KIND, DynamoGraphDeployment
from syncagent.api.schemacheck import too_deep

ALPHA_API_VERSION = f"{GROUP}/v1alpha1"

OURS = (DGD_KIND, DCD_KIND)
# libyaml's safe loader when PyYAML was built with it: ~10x faster, and it does not recurse
# per nesting level while parsing (the pure-Python one raises RecursionError on deep input).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# libyaml 0.2.5+ refuses flow nesting past 1000 levels while scanning; older builds (and some
# PyYAML wheels) parse any depth. Checking after the parse gives every build the same answer.
PARSE_DEPTH = 1000


class LoadError(ValueError):
    """Input that cannot be read or parsed; the message is one line and names the problem."""


def load_documents(text: str, *, source: str = "-") -> list[dict[str, Any]]:
    """Every non-empty document of a YAML (or JSON) stream, each a mapping.

    The items of a ``kind: List`` document (what ``kubectl get -o yaml`` prints) take its place.
    """
    try:
        docs = [d for d in yaml.load_all(text, Loader=_LOADER) if d is not None]
    except yaml.YAMLError as err:
        raise LoadError(f"{source}: not valid YAML: {_yaml_problem(err)}") from None
    except RecursionError:
        raise LoadError(f"{source}: nested too deeply to parse; flatten the document") from None
    # Before anything walks the documents: that walk is what an alias bomb multiplies.
    bomb = expansion.problem(docs)
    if bomb is not None:
        raise LoadError(f"{source}: {bomb}")
    out: list[dict[str, Any]] = []
    for i, doc in enumerate(docs):
        if too_deep(doc, limit=PARSE_DEPTH) is not None:
            raise LoadError(f"{source}: nested too deeply to parse; flatten the document")
        if not isinstance(doc, dict):
            raise LoadError(
                f"{source}: document {i + 1} is a {type(doc).__name__}, not a Kubernetes object"
            )
        out.extend(_list_items(doc, source=source, index=i) if _is_list(doc) else [doc])
    return out


def _is_list(doc: dict[str, Any]) -> bool:
    return doc.get("kind") == "List" and doc.get("apiVersion") == "v1"


def _list_items(doc: dict[str, Any], *, source: str, index: int) -> list[dict[str, Any]]:
    items = doc.get("items") or []
    where = f"{source}: document {index + 1} (kind List)"
    if not isinstance(items, list):
        raise LoadError(f"{where}: items: must be a list of objects")
    for j, item in enumerate(items):
        if not isinstance(item, dict):
            raise LoadError(f"{where}: items[{j}]: is a {type(item).__name__}, not an object")
    return items


def object_ref(doc: dict[str, Any], *, namespace: str | None = None) -> str:
    """``Kind/namespace/name`` of a raw document (``?`` for what is missing)."""
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    ns = meta.get("namespace") or namespace or "default"
    return f"{doc.get('kind') or '?'}/{ns}/{meta.get('name') or '?'}"


def is_ours(doc: dict[str, Any]) -> bool:
    """A DGD or DCD of our group, any version."""
    api_version = str(doc.get("apiVersion") or "")
    return doc.get("kind") in OURS and api_version.split("/")[0] == GROUP


def parse_object(
    doc: dict[str, Any], *, source: str = "-"
) -> DynamoGraphDeployment | DynamoComponentDeployment:
    """One DGD or DCD document as a model; LoadError names the object and the field.

    ``syncagent.api.schemas.parse_checked`` adds the CRD's structural rules (what the CLI and
    the agent use); this is the model alone.
    """
    ref = check_head(doc, source=source)
    model = DynamoGraphDeployment if doc["kind"] == DGD_KIND else DynamoComponentDeployment
    try:
        return model.model_validate(doc)
    except ValidationError as err:
        raise LoadError(f"{ref}: {validation_summary(err)}") from None


def check_head(doc: dict[str, Any], *, source: str = "-") -> str:
    """``Kind/namespace/name`` of a v1beta1 DGD/DCD with a name; LoadError otherwise."""
    _require_kind(doc, source=source)
    ref = object_ref(doc)
    if doc.get("apiVersion") != API_VERSION:
        raise LoadError(f"{ref}: {_unsupported_version(doc, source=source)}")
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise LoadError(f"{ref}: metadata.name: required; give the object a name")
    return ref


def load_objects(
    text: str, *, source: str = "-"
) -> list[DynamoGraphDeployment | DynamoComponentDeployment]:
    """Every DGD and DCD of a stream, in order; other documents are skipped."""
    return objects_of(load_documents(text, source=source), source=source)


def objects_of(
    docs: list[dict[str, Any]],
    *,
    source: str = "-",
    parse: Callable[..., DynamoGraphDeployment | DynamoComponentDeployment] | None = None,
) -> list[DynamoGraphDeployment | DynamoComponentDeployment]:
    """:func:`load_objects` of documents already read; ``parse`` replaces :func:`parse_object`."""
    for doc in docs:
        _require_kind(doc, source=source)
    parse = parse or parse_object
    found = [parse(d, source=source) for d in docs if is_ours(d)]
    if not found:
        kinds = ", ".join(sorted({str(d.get("kind")) for d in docs})) or "none"
        raise LoadError(
            f"{source}: no {DGD_KIND} or {DCD_KIND} ({API_VERSION}) found (kinds found: {kinds})"
        )
    return found


def load_graphs(text: str, *, source: str = "-") -> list[DynamoGraphDeployment]:
    """Every DGD of a stream; a stream without one is an error."""
    graphs = [o for o in load_objects(text, source=source) if isinstance(o, DynamoGraphDeployment)]
    if not graphs:
        raise LoadError(f"{source}: no {DGD_KIND} ({API_VERSION}) found")
    return graphs


def _unsupported_version(doc: dict[str, Any], *, source: str) -> str:
    version = doc.get("apiVersion")
    if version == ALPHA_API_VERSION:
        return (
            f"apiVersion {version} is not supported; convert it with "
            f"`syncagent convert -f {source}` (to {API_VERSION})"
        )
    return f"apiVersion: {version} is not supported; set apiVersion: {API_VERSION}"


def validation_summary(err: ValidationError, *, limit: int = 3) -> str:
    """Pydantic errors as ``<json path>: <message>`` items joined with ``"; "``."""
    return summary([f"{_loc_path(e['loc'])}: {_message(e)}" for e in err.errors()], limit=limit)


def summary(parts: list[str], *, limit: int = 3) -> str:
    more = len(parts) - limit
    shown = parts[:limit]
    if more > 0:
        shown.append(f"and {more} more")
    return "; ".join(shown)


def _require_kind(doc: dict[str, Any], *, source: str) -> None:
    for field in ("apiVersion", "kind"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            raise LoadError(
                f"{object_ref(doc)} in {source}: {field}: required; every document needs "
                "apiVersion and kind"
            )


def _loc_path(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "literal[", "union[")):
            continue  # pydantic's internal union/validator branch names
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"


def _message(error: Any) -> str:
    if error["type"] == "missing":
        return "required"
    return str(error["msg"]).replace("\n", " ")


def _yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else problem
