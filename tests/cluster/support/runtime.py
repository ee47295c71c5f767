"""ConfigMaps, Events and etcd compaction for the runtime cluster tests (no tests here)."""

from __future__ import annotations

import base64
from typing import Any

import httpx2

from syncagent.kube.kinds import CONFIG_MAP, EVENT
from syncagent.rest.request import MERGE_PATCH, build
from syncagent.rest.transport import call
from syncagent.runtime.leader import LEASE


def config_map(
    namespace: str, name: str, *, labels: dict[str, str] | None = None, **data: str
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "data": data,
    }


async def create(client: Any, obj: dict[str, Any]) -> dict[str, Any]:
    ns = obj["metadata"]["namespace"]
    return await call(client, build(CONFIG_MAP, "create", namespace=ns, body=obj))


async def delete(client: Any, namespace: str, name: str) -> None:
    await call(client, build(CONFIG_MAP, "delete", namespace=namespace, name=name))


async def patch_data(client: Any, namespace: str, name: str, **data: str) -> dict[str, Any]:
    request = build(
        CONFIG_MAP,
        "patch",
        namespace=namespace,
        name=name,
        body={"data": data},
        content_type=MERGE_PATCH,
    )
    return await call(client, request)


async def compact_etcd(control_plane: Any) -> int:
    """Compact etcd's history up to now (the API server also does this every 5 minutes);
    returns the revision compacted to. Watches from older resourceVersions then get 410."""
    key = base64.b64encode(b"/registry").decode()
    async with httpx2.AsyncClient(base_url=control_plane.etcd_url, timeout=10) as http:
        resp = await http.post("/v3/kv/range", json={"key": key, "limit": 1})
        resp.raise_for_status()
        revision = int(resp.json()["header"]["revision"])
        resp = await http.post("/v3/kv/compaction", json={"revision": revision, "physical": True})
        resp.raise_for_status()
    return revision


def event(namespace: str, name: str, *, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "namespace": namespace,
            "name": "x",
        },
        "reason": "Test",
        "message": name,
        "type": "Normal",
    }


async def create_event(client: Any, obj: dict[str, Any]) -> dict[str, Any]:
    ns = obj["metadata"]["namespace"]
    return await call(client, build(EVENT, "create", namespace=ns, body=obj))


async def lease(client: Any, namespace: str) -> dict[str, Any]:
    """The agents' Lease (named ``agent``) as the server holds it."""
    return await call(client, build(LEASE, "get", namespace=namespace, name="agent"))
