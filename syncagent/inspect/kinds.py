"""Resolve ``KIND/NAME`` as kubectl does: kind, plural, singular or short name, optionally
qualified by group (``deployments.apps``, ``dgd``), through API discovery."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2

from syncagent.runtime.client import http_client


class UnknownKindError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class KindInfo:
    api_version: str
    kind: str
    plural: str
    namespaced: bool


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


async def resolve_kind(client: Any, text: str) -> KindInfo:
    """The served resource ``text`` names; core group first, then groups in server order."""
    http = http_client(client)
    wanted = text.lower()
    for group, version in await _group_versions(http):
        doc = await _get(http, f"/api/{version}" if not group else f"/apis/{group}/{version}")
        for res in (doc or {}).get("resources") or ():
            if "/" in res.get("name", "") or not matches(res, group, wanted):
                continue
            api_version = f"{group}/{version}" if group else version
            return KindInfo(api_version, res["kind"], res["name"], bool(res.get("namespaced")))
    raise UnknownKindError(
        f"{text}: the server has no resource type {text!r}; check the kind (kubectl "
        "api-resources lists them)"
    )


async def _group_versions(http: httpx2.AsyncClient) -> list[tuple[str, str]]:
    out = [("", "v1")]
    doc = await _get(http, "/apis") or {}
    for group in doc.get("groups") or ():
        preferred = (group.get("preferredVersion") or {}).get("version")
        if preferred:
            out.append((group["name"], preferred))
    return out


async def _get(http: httpx2.AsyncClient, path: str) -> dict[str, Any] | None:
    response = await http.get(path)
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return response.json()


def object_path(info: KindInfo, *, name: str, namespace: str) -> str:
    group, _, version = info.api_version.rpartition("/")
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if info.namespaced:
        return f"{base}/namespaces/{namespace}/{info.plural}/{name}"
    return f"{base}/{info.plural}/{name}"
