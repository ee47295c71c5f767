"""Resolve ``KIND/NAME`` as kubectl does: kind, plural, singular or short name, optionally
qualified by group (``deployments.apps``, ``dgd``), through API discovery."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2

from syncagent.rest.request import discovery
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call_or_none


class UnknownKindError(Exception):
    pass


def split_target(target: str) -> tuple[str, str]:
    """``KIND/NAME`` -> (kind, name); a one-line error otherwise."""
    kind, sep, name = target.partition("/")
    if not sep or not kind or not name or "/" in name:
        raise UnknownKindError(f"{target}: expected KIND/NAME, for example deployment/web")
    return kind, name


def matches(resource: Mapping[str, Any], group: str, wanted: str) -> bool:
    """Whether ``wanted`` (lower-cased, maybe ``name.group``) names this discovery resource."""
    names = {
        str(resource.get("kind", "")).lower(),
        str(resource.get("name", "")).lower(),
        str(resource.get("singularName", "")).lower(),
        *(s.lower() for s in resource.get("shortNames") or ()),
    } - {""}
    if wanted in names:
        return True
    base, _, qualifier = wanted.partition(".")
    return bool(qualifier) and base in names and qualifier == group.lower()


async def resolve_kind(client: httpx2.AsyncClient, text: str) -> Resource:
    """The served resource ``text`` names; core group first, then groups in server order."""
    wanted = text.lower()
    for group, version in await _group_versions(client):
        api_version = f"{group}/{version}" if group else version
        doc = await call_or_none(client, discovery(api_version))
        for res in (doc or {}).get("resources") or ():
            if "/" in res.get("name", "") or not matches(res, group, wanted):
                continue
            namespaced = bool(res.get("namespaced"))
            return Resource(group, version, res["kind"], res["name"], namespaced)
    raise UnknownKindError(
        f"{text}: the server has no resource type {text!r}; check the kind (kubectl "
        "api-resources lists them)"
    )


async def _group_versions(client: httpx2.AsyncClient) -> list[tuple[str, str]]:
    out = [("", "v1")]
    doc = await call_or_none(client, discovery()) or {}
    for group in doc.get("groups") or ():
        preferred = (group.get("preferredVersion") or {}).get("version")
        if preferred:
            out.append((group["name"], preferred))
    return out
