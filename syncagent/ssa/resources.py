"""Where an apiVersion/kind lives on the server: its plural and whether it is namespaced.

Built-in kinds come from lightkube's bundled models (no request); custom resources from API
discovery (``GET /apis/<group>/<version>``), fetched once per group-version and refetched once
when a kind is missing (a CRD installed since) or was found not served (a CRD removed since).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from lightkube.core import resource as lk_resource
from lightkube.core.exceptions import LoadResourceError
from lightkube.core.resource_registry import resource_registry

from syncagent.kube.objects import ObjectRef
from syncagent.rest.request import Request, discovery
from syncagent.rest.resource import Resource
from syncagent.ssa.errors import DesiredObjectError, NotServedError

Fetch = Callable[[Request], Awaitable[Mapping[str, Any] | None]]


def builtin(api_version: str, kind: str) -> Resource | None:
    """A kind lightkube ships a model for, or None."""
    try:
        res = resource_registry.load(api_version, kind)
    except (LoadResourceError, ImportError, ValueError):
        return None
    # The registry also holds generic resources registered in this process (for a CRD); those
    # are discovered like any custom kind, so a removed CRD is noticed.
    if res is None or not res.__module__.startswith("lightkube.resources."):
        return None
    api = lk_resource.api_info(res)
    return Resource(
        api.resource.group,
        api.resource.version,
        api.resource.kind,
        api.plural,
        namespaced=issubclass(res, lk_resource.NamespacedResource),
    )


class ResourceResolver:
    def __init__(self, fetch_discovery: Fetch) -> None:
        self._fetch = fetch_discovery
        self._docs: dict[str, dict[str, Resource]] = {}

    async def resolve(self, ref: ObjectRef) -> Resource:
        info = builtin(ref.api_version, ref.kind)
        if info is None:
            info = await self._discovered(ref, refresh=False)
        if info is None:
            info = await self._discovered(ref, refresh=True)
        if info is None:
            raise NotServedError(
                ref.subject,
                f"the server does not serve kind {ref.kind} in {ref.api_version}; check "
                "apiVersion and kind, or install the CRD",
            )
        _check_scope(ref, info)
        return info

    def forget(self, api_version: str) -> None:
        """Look ``api_version`` up again next time (the server stopped serving a kind of it)."""
        self._docs.pop(api_version, None)

    async def _discovered(self, ref: ObjectRef, *, refresh: bool) -> Resource | None:
        if refresh or ref.api_version not in self._docs:
            self._docs[ref.api_version] = await self._load(ref)
        return self._docs[ref.api_version].get(ref.kind)

    async def _load(self, ref: ObjectRef) -> dict[str, Resource]:
        doc = await self._fetch(discovery(ref.api_version)) or {}
        out: dict[str, Resource] = {}
        for res in doc.get("resources") or []:
            if "/" in res.get("name", ""):
                continue  # a subresource
            out[res["kind"]] = Resource(
                ref.group, ref.version, res["kind"], res["name"], bool(res.get("namespaced"))
            )
        return out


def _check_scope(ref: ObjectRef, info: Resource) -> None:
    if info.namespaced and not ref.namespace:
        raise DesiredObjectError(ref.subject, f"{ref.kind} is namespaced; set metadata.namespace")
    if not info.namespaced and ref.namespace:
        raise DesiredObjectError(
            ref.subject, f"{ref.kind} is cluster-scoped; remove metadata.namespace"
        )
