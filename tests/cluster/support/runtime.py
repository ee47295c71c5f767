"""ConfigMaps, Events and etcd compaction for the runtime cluster tests (no tests here)."""

from __future__ import annotations

import base64
from typing import Any

import httpx2

from syncagent.runtime.client import request_json


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
    return await request_json(client, "POST", f"api/v1/namespaces/{ns}/configmaps", body=obj)


async def delete(client: Any, namespace: str, name: str) -> None:
    await request_json(client, "DELETE", f"api/v1/namespaces/{namespace}/configmaps/{name}")


async def patch_data(client: Any, namespace: str, name: str, **data: str) -> dict[str, Any]:
    return await request_json(
        client,
        "PATCH",
        f"api/v1/namespaces/{namespace}/configmaps/{name}",
        body={"data": data},
        content_type="application/merge-patch+json",
    )


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
    return await request_json(client, "POST", f"api/v1/namespaces/{ns}/events", body=obj)
