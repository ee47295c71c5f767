"""The engine's API calls: each built by ``rest.request`` and sent by ``rest.transport``, its
answer read as raw JSON and its errors mapped to the engine's (``ssa/errors.py``).

Raw JSON (not lightkube's typed models) so that every field the server returns is compared,
whatever the kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx2
import orjson

from syncagent.kube.objects import ObjectRef
from syncagent.rest.request import Request, build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call_or_none, send, status_of
from syncagent.ssa.errors import NotServedError, error_from_status, resource_not_served
from syncagent.ssa.resources import ResourceResolver

READS = frozenset({"get", "list"})
# Told which object's kind the server turned out not to serve (a CRD removed since the kind was
# looked up): the caller refreshes what it knows of the server (the agent: its discovery).
OnNotServed = Callable[[ObjectRef], None]


class KubeApi:
    """get / list / apply / patch / create / update / delete of raw JSON objects, over the
    process's one HTTP client. Only the engine (``ssa/``) calls it.

    A request whose resource type the server does not serve (a 404 that names no object)
    raises :class:`NotServedError` from a write, or reads as absent; either way the kind is
    looked up again next time and ``on_not_served`` is told. So is a write of a kind the lookup
    already finds unserved ("no matches for kind").
    """

    def __init__(
        self, client: httpx2.AsyncClient, *, on_not_served: OnNotServed | None = None
    ) -> None:
        self._on_not_served = on_not_served
        self.http = client
        self.resources = ResourceResolver(self._discovery)

    async def resolve(self, ref: ObjectRef) -> Resource:
        return await self.resources.resolve(ref)

    async def resolve_for_write(self, ref: ObjectRef) -> Resource:
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
        if resource_not_served(404, status_of(response)):
            self._not_served(ref)
        return True

    async def _request(self, ref: ObjectRef, verb: str, **options: Any) -> httpx2.Response:
        info = await (self.resolve(ref) if verb in READS else self.resolve_for_write(ref))
        name = "" if verb in ("list", "create") else ref.name
        request = build(info, verb, namespace=ref.namespace, name=name, **options)
        return await send(self.http, request)

    async def get(self, ref: ObjectRef, *, subresource: str = "") -> dict[str, Any] | None:
        response = await self._request(ref, "get", subresource=subresource)
        if self._absent(ref, response):
            return None
        return self._result(ref, response)

    async def list(self, ref: ObjectRef) -> list[dict[str, Any]]:
        """The items of ``ref``'s kind in ``ref.namespace`` (the name is ignored)."""
        response = await self._request(ref, "list")
        if self._absent(ref, response):
            return []
        return list(self._result(ref, response).get("items") or [])

    async def create(
        self, ref: ObjectRef, body: Mapping[str, Any], *, manager: str, dry_run: bool = False
    ) -> dict[str, Any]:
        response = await self._request(
            ref, "create", body=body, field_manager=manager, dry_run=dry_run
        )
        return self._result(ref, response)

    async def update(
        self, ref: ObjectRef, body: Mapping[str, Any], *, manager: str, dry_run: bool = False
    ) -> dict[str, Any]:
        response = await self._request(
            ref, "update", body=body, field_manager=manager, dry_run=dry_run
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
        response = await self._request(
            ref,
            "apply",
            body=body,
            field_manager=manager,
            force=force,
            dry_run=dry_run,
            subresource=subresource,
        )
        return self._result(ref, response)

    async def patch(
        self,
        ref: ObjectRef,
        body: Any,
        *,
        content_type: str,
        manager: str = "",
        dry_run: bool = False,
        subresource: str = "",
    ) -> dict[str, Any]:
        """A JSON or merge patch, for the few writes server-side apply cannot make."""
        response = await self._request(
            ref,
            "patch",
            body=body,
            content_type=content_type,
            field_manager=manager,
            dry_run=dry_run,
            subresource=subresource,
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
        preconditions = {"uid": uid}
        if resource_version:
            preconditions["resourceVersion"] = resource_version
        body = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": preconditions,
            "propagationPolicy": propagation,
        }
        response = await self._request(ref, "delete", body=body, dry_run=dry_run)
        if self._absent(ref, response):
            return False
        self._result(ref, response)
        return True

    async def _discovery(self, request: Request) -> Mapping[str, Any] | None:
        found: Mapping[str, Any] | None = await call_or_none(self.http, request)
        return found

    def _result(self, ref: ObjectRef, response: httpx2.Response) -> dict[str, Any]:
        if response.status_code < 400:
            return orjson.loads(response.content)
        status = status_of(response)
        if resource_not_served(response.status_code, status):
            self._not_served(ref)
            raise NotServedError(
                ref.subject,
                f"the server does not serve kind {ref.kind} in {ref.api_version} (any more): "
                f"{status.get('message') or 'HTTP 404'}; install its CRD, or leave it unused",
            )
        raise error_from_status(ref.subject, response.status_code, status)
