"""The request builder: (resource, verb, namespace, name, subresource, params, body) in, the
method, path, query, headers and content of one API request out. Pure (no I/O, no client), so
every rule of the URL and the write options is unit-tested; ``transport.py`` sends the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from syncagent.rest.resource import Resource

JSON = "application/json"
APPLY = "application/apply-patch+yaml"  # server-side apply; JSON is YAML
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"

METHODS = {
    "get": "GET",
    "list": "GET",
    "watch": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "apply": "PATCH",
    "delete": "DELETE",
}
# Verbs that address one object by name; the others address the collection.
NAMED = frozenset({"get", "update", "patch", "apply", "delete"})


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str  # from the server URL: /api/v1/..., /apis/<group>/<version>/...
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=lambda: {"Accept": JSON})
    content: bytes | None = None


def path(resource: Resource, *, namespace: str = "", name: str = "", subresource: str = "") -> str:
    """The URL path of ``resource``: its collection, one object, or one object's subresource.
    A namespaced resource without ``namespace`` addresses every namespace."""
    parts = [f"/apis/{resource.group}" if resource.group else "/api", resource.version]
    if resource.namespaced and namespace:
        parts += ["namespaces", namespace]
    parts.append(resource.plural)
    if name:
        parts.append(name)
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


@dataclass(frozen=True, slots=True)
class Addressed:
    """What a request path addresses, read back (metrics and request counts label by it)."""

    plural: str  # "" for a discovery document
    name: str = ""
    subresource: str = ""


def addressed(path: str) -> Addressed:
    """The inverse of :func:`path`: ``/api/v1/namespaces/ns/pods/a/status`` -> pods, a, status."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"]:
        rest = parts[3:]
    else:
        return Addressed("")
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]  # a namespaced resource; namespaces/<ns> alone is a Namespace
    if not rest:
        return Addressed("")
    return Addressed(rest[0], rest[1] if len(rest) > 1 else "", "/".join(rest[2:]))


def build(
    resource: Resource,
    verb: str,
    *,
    namespace: str = "",
    name: str = "",
    subresource: str = "",
    params: Mapping[str, str] | None = None,
    body: Any = None,
    content_type: str = "",
    field_manager: str = "",
    force: bool = False,
    dry_run: bool = False,
) -> Request:
    """One request of ``verb`` (``get``, ``list``, ``watch``, ``create``, ``update``, ``patch``,
    ``apply``, ``delete``); ``patch`` needs ``content_type``, ``apply`` a ``field_manager``."""
    method = METHODS.get(verb)
    if method is None:
        raise ValueError(f"{resource}: unknown verb {verb!r}; one of {', '.join(METHODS)}")
    if (verb in NAMED) != bool(name):
        wanted = "needs a name" if verb in NAMED else "addresses a collection: no name"
        raise ValueError(f"{resource}/{namespace}/{name}: {verb} {wanted}")
    if subresource and not name:
        raise ValueError(f"{resource}/{namespace}: a subresource needs an object name")
    query = dict(params or {})
    if verb == "watch":
        query["watch"] = "true"
    query.update(_write_params(resource, verb, field_manager, force=force, dry_run=dry_run))
    content_type = _content_type(resource, verb, content_type)
    headers = {"Accept": JSON}
    content = None
    if body is not None:
        content = orjson.dumps(body)
        headers["Content-Type"] = content_type
    where = path(resource, namespace=namespace, name=name, subresource=subresource)
    return Request(method, where, query, headers, content)


def _write_params(
    resource: Resource, verb: str, field_manager: str, *, force: bool, dry_run: bool
) -> dict[str, str]:
    if verb == "apply" and not field_manager:
        raise ValueError(f"{resource}: server-side apply needs a field manager")
    if force and verb != "apply":
        raise ValueError(f"{resource}: force is an option of apply only, not of {verb}")
    out = {"fieldManager": field_manager} if field_manager else {}
    if force:
        out["force"] = "true"
    if dry_run:
        out["dryRun"] = "All"
    return out


def _content_type(resource: Resource, verb: str, given: str) -> str:
    if verb == "apply":
        return APPLY
    if verb == "patch" and not given:
        raise ValueError(f"{resource}: a patch needs a content type (merge, JSON or apply)")
    return given or JSON


def discovery(api_version: str = "") -> Request:
    """A discovery document: one group-version's resources (``v1``, ``apps/v1``), or without
    ``api_version`` the list of API groups (``/apis``)."""
    if not api_version:
        return Request("GET", "/apis")
    return Request("GET", f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}")
