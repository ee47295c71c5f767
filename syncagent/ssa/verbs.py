"""The engine's plain verbs: reads, deletes with UID preconditions, patches, takeovers,
create and update. :class:`~syncagent.ssa.engine.Engine` adds server-side apply with dry-run
convergence on top. Every write here is a real write: a plan runs on another applier
(``ssa/applier.py``), chosen where the program is put together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2

from syncagent.kube.objects import Body, ObjectRef
from syncagent.rest.request import JSON_PATCH, MERGE_PATCH, path
from syncagent.ssa.api import KubeApi, OnNotServed
from syncagent.ssa.cache import ConvergenceCache
from syncagent.ssa.counter import RequestCounter
from syncagent.ssa.desired import ref_of
from syncagent.ssa.errors import DesiredObjectError, SsaError
from syncagent.ssa.managedfields import managed_fields_patch
from syncagent.ssa.options import ABSENT, Live


class Verbs:
    """``client`` is the process's HTTP client (its connection is shared). ``counter`` counts
    every request of that client. ``on_not_served`` is told of every object whose kind
    the server turned out not to serve (``KubeApi``)."""

    def __init__(
        self,
        client: httpx2.AsyncClient,
        *,
        cache: ConvergenceCache | None = None,
        counter: RequestCounter | None = None,
        on_not_served: OnNotServed | None = None,
    ) -> None:
        self.api = KubeApi(client, on_not_served=on_not_served)
        self.cache = cache if cache is not None else ConvergenceCache()
        self.counter = (counter or RequestCounter()).attach(self.api.http)
        # Creates carry the create-only resourceVersion (certain.py) unless the agent's start-up
        # check found admission refusing it (ssa/createcheck.py): then they read first.
        self.create_only = True

    async def get(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any] | None:
        """The live object named by ``obj`` (any object with apiVersion, kind and metadata)."""
        return await self.read(obj, subresource=subresource)

    async def read(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any] | None:
        """The server's copy of ``obj``, always (a planning engine's :meth:`get` may answer
        with what its dry runs composed)."""
        return await self.api.get(ref_of(obj), subresource=subresource)

    async def list(self, api_version: str, kind: str, namespace: str) -> list[dict[str, Any]]:
        """Every object of a kind in ``namespace`` (each with apiVersion and kind); none when
        the kind is not served."""
        ref = ObjectRef(api_version, kind, "-", namespace)
        try:
            await self.api.resolve(ref)
        except DesiredObjectError:
            return []  # not served: nothing of that kind exists
        items = await self.api.list(ref)
        return [{"apiVersion": api_version, "kind": kind, **item} for item in items]

    async def path_of(self, obj: Mapping[str, Any], *, subresource: str = "") -> str:
        """The API path of ``obj`` (what an audit log or a plan names a write by)."""
        ref = ref_of(obj)
        info = await self.api.resolve(ref)
        return path(info, namespace=ref.namespace, name=ref.name, subresource=subresource)

    async def live_view(self, obj: Mapping[str, Any], live: Live = None) -> dict[str, Any] | None:
        """The caller's view as a plain dict: None for ``ABSENT``, ``get`` when ``live`` is None."""
        if live is None:
            return await self.get(obj)
        return await self._live(ref_of(obj), live)

    async def view_for_create(self, obj: Mapping[str, Any], live: Live) -> dict[str, Any] | None:
        """The caller's view of an object it may create: None when the caller did not say
        (``live`` None) costs no read, because a create-only create finds out itself."""
        return None if live is None else await self.live_view(obj, live)

    async def owner_alive(self, owner: Mapping[str, Any], *, uid: str) -> bool:
        """Whether ``owner`` (apiVersion, kind, name, namespace) exists on the server with
        ``uid`` and is not being deleted: one GET."""
        found = Body(await self.read(owner))
        return found.meta.uid == uid and not found.being_deleted

    async def delete(
        self,
        obj: Mapping[str, Any],
        *,
        uid: str,
        resource_version: str | None = None,
        propagation: str = "Background",
    ) -> bool:
        """Delete the object only if it still has ``uid`` (and ``resource_version``, if given).

        Returns False when it was already gone; raises ``PreconditionError`` when the object
        was replaced or changed.
        """
        if not uid:
            raise SsaError(ref_of(obj).subject, "delete needs the UID of the object to delete")
        ref = ref_of(obj)
        self.cache.forget(ref)
        return await self.api.delete(
            ref, uid=uid, resource_version=resource_version, propagation=propagation
        )

    async def patch(
        self,
        obj: Mapping[str, Any],
        body: Any,
        *,
        manager: str,
        content_type: str = MERGE_PATCH,
        subresource: str = "",
    ) -> dict[str, Any]:
        """A merge (or JSON) patch, for the few writes server-side apply cannot make (a custom
        resource's ``/scale``: kubernetes#116311)."""
        ref = ref_of(obj)
        self.cache.forget(ref)
        return await self.api.patch(
            ref, body, content_type=content_type, manager=manager, subresource=subresource
        )

    async def replace_managed_fields(
        self,
        live: Mapping[str, Any],
        managed_fields: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """Rewrite ``live``'s managedFields, nothing else, in one write guarded by its
        resourceVersion (a takeover: ``ssa.takeover``)."""
        ref = ref_of(live)
        result = await self.api.patch(
            ref, takeover_patch(live, managed_fields), content_type=JSON_PATCH
        )
        self.cache.forget(ref)
        return result

    async def create(self, obj: Mapping[str, Any], *, manager: str) -> dict[str, Any]:
        """A plain create (POST)."""
        return await self.api.create(ref_of(obj), obj, manager=manager)

    async def update(self, obj: Mapping[str, Any], *, manager: str) -> dict[str, Any]:
        """A plain update (PUT, guarded by the body's resourceVersion)."""
        return await self.api.update(ref_of(obj), obj, manager=manager)

    async def _live(self, ref: ObjectRef, live: Live) -> dict[str, Any] | None:
        if live is ABSENT:
            return None
        if live is None:
            return await self.api.get(ref)
        if isinstance(live, Mapping):
            return dict(live)
        return live.to_dict()


def takeover_patch(live: Mapping[str, Any], managed_fields: list[dict[str, Any]]) -> list[Any]:
    """The JSON patch that rewrites ``live``'s managedFields, guarded by its resourceVersion."""
    version = Body(live).meta.resource_version
    if not version:
        raise SsaError(ref_of(live).subject, "takeover needs the live object's resourceVersion")
    return managed_fields_patch(managed_fields, version)
