"""The few raw API calls the engine makes, on the HTTP client of a lightkube client.

Raw JSON (not lightkube's typed models) so that every field the server returns is compared,
whatever the kind; apply, dry run, force, the status subresource and delete preconditions are
plain query parameters and bodies here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx2
import orjson

from syncagent.kube.objects import ObjectRef
from syncagent.ssa.counter import http_client_of
from syncagent.ssa.errors import NotServedError, error_from_status, resource_not_served
from syncagent.ssa.resources import ResourceInfo, ResourceResolver

APPLY_CONTENT_TYPE = "application/apply-patch+yaml"  # JSON is YAML
# Told which object's kind the server turned out not to serve (a CRD removed since the kind was
# looked up): the caller refreshes what it knows of the server (the agent: its discovery).
OnNotServed = Callable[[ObjectRef], None]


class KubeApi:
    """Raw get / list / apply / patch / create / update / delete through one shared httpx2
    client. Only the engine (``ssa/``) calls it.

    A request whose resource type the server does not serve (a 404 that names no object)
    raises :class:`NotServedError` from a write, or reads as absent; either way the kind is
    looked up again next time and ``on_not_served`` is told. So is a write of a kind the lookup
    already finds unserved ("no matches for kind").
    """

    def __init__(self, client: Any, *, on_not_served: OnNotServed | None = None) -> None:
        self._on_not_served = on_not_served
        self.http: httpx2.AsyncClient = http_client_of(client)  # type: ignore[assignment]
        if not isinstance(self.http, httpx2.AsyncClient):
            raise TypeError(
                "the apply engine needs a lightkube AsyncClient (or httpx2.AsyncClient)"
            )
        self.resources = ResourceResolver(self._discovery)

    async def resolve(self, ref: ObjectRef) -> ResourceInfo:
        return await self.resources.resolve(ref)

    async def resolve_for_write(self, ref: ObjectRef) -> ResourceInfo:
        """:meth:`resolve` before a write: a kind not served ("no matches for kind") is told."""
        try:
            return await self.resolve(ref)
        except NotServedError:
            self._not_served(ref)
            raise

    def _not_served(self, ref: ObjectRef) -> None:
        self.resources.forget(ref.api_version)
        if self._on_not_served is not None:
            self._on_not_served(ref)

    def _absent(self, ref: ObjectRef, response: httpx2.Response) -> bool:
        """A 404: the object is absent, and maybe its whole kind (then say so)."""
        if response.status_code != 404:
            return False
        if resource_not_served(404, _status_of(response)):
            self._not_served(ref)
        return True

    async def get(self, ref: ObjectRef, *, subresource: str = "") -> dict[str, Any] | None:
        info = await self.resolve(ref)
        url = info.path(namespace=ref.namespace, name=ref.name, subresource=subresource)
        response = await self.http.get(url)
        if self._absent(ref, response):
            return None
        return self._result(ref, response)

    async def list(self, ref: ObjectRef) -> list[dict[str, Any]]:
        """The items of ``ref``'s kind in ``ref.namespace`` (the name is ignored)."""
        info = await self.resolve(ref)
        response = await self.http.get(info.path(namespace=ref.namespace))
        if self._absent(ref, response):
            return []
        return list(self._result(ref, response).get("items") or [])

    async def create(
        self, ref: ObjectRef, body: Mapping[str, Any], *, manager: str, dry_run: bool
    ) -> dict[str, Any]:
        info = await self.resolve_for_write(ref)
        return await self._send(
            ref, "POST", info.path(namespace=ref.namespace), body, manager, dry_run
        )

    async def update(
        self, ref: ObjectRef, body: Mapping[str, Any], *, manager: str, dry_run: bool
    ) -> dict[str, Any]:
        info = await self.resolve_for_write(ref)
        path = info.path(namespace=ref.namespace, name=ref.name)
        return await self._send(ref, "PUT", path, body, manager, dry_run)

    async def _send(
        self,
        ref: ObjectRef,
        method: str,
        path: str,
        body: Mapping[str, Any],
        manager: str,
        dry_run: bool,
    ) -> dict[str, Any]:
        params = {"fieldManager": manager}
        if dry_run:
            params["dryRun"] = "All"
        response = await self.http.request(
            method,
            path,
            params=params,
            content=orjson.dumps(body),
            headers={"Content-Type": "application/json"},
        )
        return self._result(ref, response)

    async def apply(
        self,
        ref: ObjectRef,
        body: Mapping[str, Any],
        *,
        manager: str,
        force: bool,
        dry_run: bool,
        subresource: str = "",
    ) -> dict[str, Any]:
        return await self.patch(
            ref,
            body,
            content_type=APPLY_CONTENT_TYPE,
            manager=manager,
            force=force,
            dry_run=dry_run,
            subresource=subresource,
        )

    async def patch(
        self,
        ref: ObjectRef,
        body: Any,
        *,
        content_type: str,
        manager: str = "",
        force: bool = False,
        dry_run: bool = False,
        subresource: str = "",
    ) -> dict[str, Any]:
        """A patch of any content type: server-side apply, or a JSON or merge patch for the
        few writes SSA cannot do."""
        info = await self.resolve_for_write(ref)
        params = {"fieldManager": manager} if manager else {}
        if force:
            params["force"] = "true"
        if dry_run:
            params["dryRun"] = "All"
        response = await self.http.patch(
            info.path(namespace=ref.namespace, name=ref.name, subresource=subresource),
            params=params,
            content=orjson.dumps(body),
            headers={"Content-Type": content_type},
        )
        return self._result(ref, response)

    async def delete(
        self,
        ref: ObjectRef,
        *,
        uid: str,
        resource_version: str | None = None,
        propagation: str = "Background",
        dry_run: bool = False,
    ) -> bool:
        """Delete with preconditions; False when the object was already gone."""
        info = await self.resolve_for_write(ref)
        preconditions = {"uid": uid}
        if resource_version:
            preconditions["resourceVersion"] = resource_version
        body = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": preconditions,
            "propagationPolicy": propagation,
        }
        response = await self.http.request(
            "DELETE",
            info.path(namespace=ref.namespace, name=ref.name),
            params={"dryRun": "All"} if dry_run else None,
            content=orjson.dumps(body),
            headers={"Content-Type": "application/json"},
        )
        if self._absent(ref, response):
            return False
        self._result(ref, response)
        return True

    async def _discovery(self, path: str) -> Mapping[str, Any] | None:
        response = await self.http.get(path)
        if response.status_code == 404:
            return None
        response.raise_for_status()
        return orjson.loads(response.content)

    def _result(self, ref: ObjectRef, response: httpx2.Response) -> dict[str, Any]:
        if response.status_code < 400:
            return orjson.loads(response.content)
        status = _status_of(response)
        if resource_not_served(response.status_code, status):
            self._not_served(ref)
            raise NotServedError(
                ref.subject,
                f"the server does not serve kind {ref.kind} in {ref.api_version} (any more): "
                f"{status.get('message') or 'HTTP 404'}; install its CRD, or leave it unused",
            )
        raise error_from_status(ref.subject, response.status_code, status)


def _status_of(response: httpx2.Response) -> dict[str, Any]:
    try:
        status = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return {"message": response.text.strip()}
    return status if isinstance(status, dict) else {"message": response.text.strip()}
