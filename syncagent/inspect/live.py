"""Read one live object for the inspect commands (raw JSON, every field the server returns)."""

from __future__ import annotations

from typing import Any

import httpx2

from syncagent.inspect.kinds import resolve_kind
from syncagent.kube import kinds
from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import send, status_of


class ReadError(Exception):
    pass


async def read(
    client: httpx2.AsyncClient, info: Resource, *, name: str, namespace: str
) -> dict[str, Any]:
    subject = f"{info.kind}/{namespace}/{name}" if info.namespaced else f"{info.kind}/{name}"
    response = await send(client, build(info, "get", namespace=namespace, name=name))
    if response.status_code == 404:
        where = f" in namespace {namespace}" if info.namespaced else ""
        raise ReadError(f"{subject}: not found{where}; check the name and -n/--namespace")
    if response.status_code >= 400:
        message = str(status_of(response).get("message") or response.text)
        raise ReadError(f"{subject}: cannot read it: HTTP {response.status_code} {message.strip()}")
    obj = response.json()
    obj.setdefault("apiVersion", info.api_version)
    obj.setdefault("kind", info.kind)
    return obj


async def read_target(
    client: httpx2.AsyncClient, kind: str, name: str, *, namespace: str
) -> dict[str, Any]:
    return await read(client, await resolve_kind(client, kind), name=name, namespace=namespace)


async def read_graph(client: httpx2.AsyncClient, name: str, *, namespace: str) -> dict[str, Any]:
    return await read(client, kinds.DGD, name=name, namespace=namespace)
