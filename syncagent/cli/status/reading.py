"""What ``syncagent status`` reads: the graph's namespace, listed once or kept by watches.

Only namespaced lists and watches of the kinds the tree shows, so a user with read rights in the
namespace (get, list, watch) can run it; a kind the server does not serve (no Grove, no LWS) is
left out, a kind the user may not list is a one-line error naming what to grant. ``-w`` keeps
the objects with the agent's own informers (list, then watch with bookmarks, relist on 410
Gone) and redraws on their change notifications: nothing polls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
from httpx2 import AsyncClient

from syncagent.inspect.session import InspectError
from syncagent.kube import kinds as k
from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import send, status_of
from syncagent.runtime.cache import Change
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.watch import Informer, WatchTarget

Obj = dict[str, Any]

KINDS: tuple[Resource, ...] = (
    k.DGD,
    k.DCD,
    k.DISAGGREGATED_SET,
    k.POD_CLIQUE_SET,
    k.POD_CLIQUE_SCALING_GROUP,
    k.POD_CLIQUE,
    k.LEADER_WORKER_SET,
    k.DEPLOYMENT,
    k.REPLICA_SET,
    k.STATEFUL_SET,
    k.SERVICE,
    k.POD,
    k.EVENT,
)


async def list_kind(
    client: AsyncClient, kind: Resource, namespace: str, *, limit: int = 0
) -> list[Obj] | None:
    """The objects of ``kind`` in ``namespace``; ``None`` when the server does not serve it."""
    params = {"limit": str(limit)} if limit else {}
    response = await send(client, build(kind, "list", namespace=namespace, params=params))
    if response.status_code == 404:
        return None
    if response.status_code >= 400:
        message = str(status_of(response).get("message") or response.text)
        hint = (
            f"; the user (or --as identity) needs get, list and watch on {kind.plural}"
            if response.status_code in (401, 403)
            else ""
        )
        raise InspectError(
            f"{kind.kind} in namespace {namespace}: cannot list: HTTP {response.status_code} "
            f"{' '.join(message.split())}{hint}"
        )
    items: list[Obj] = response.json().get("items") or []
    for item in items:
        # List items of built-in kinds come without kind/apiVersion.
        item.setdefault("kind", kind.kind)
        item.setdefault("apiVersion", kind.api_version)
    return items


async def read_once(client: AsyncClient, namespace: str) -> list[Obj]:
    out: list[Obj] = []
    for kind in KINDS:
        out += await list_kind(client, kind, namespace) or []
    return out


async def served_kinds(client: AsyncClient, namespace: str) -> list[Resource]:
    """The kinds served and listable here (a one-item list each: permissions checked first)."""
    return [kind for kind in KINDS if await list_kind(client, kind, namespace, limit=1) is not None]


class Watched:
    """One informer per served kind; ``on_change`` runs on every change any of them sees."""

    def __init__(self, client: AsyncClient, kinds: list[Resource], namespace: str) -> None:
        metrics = Metrics()  # a private registry: a CLI run exports nothing
        self.informers = [
            Informer(
                client,
                WatchTarget(kind, namespace=namespace),
                metrics=metrics,
            )
            for kind in kinds
        ]
        self._kinds = kinds

    def on_change(self, callback: Callable[[], None]) -> None:
        def handler(_change: Change[Obj]) -> None:
            callback()

        for informer in self.informers:
            informer.cache.add_handler(handler)

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Start every informer; returns once each has listed (its cache is synced)."""
        for informer in self.informers:
            tg.start_soon(informer.run)
        for informer in self.informers:
            await informer.cache.wait_synced()

    def objects(self) -> list[Obj]:
        out: list[Obj] = []
        for kind, informer in zip(self._kinds, self.informers, strict=True):
            for obj in informer.cache.list():
                obj.setdefault("kind", kind.kind)
                obj.setdefault("apiVersion", kind.api_version)
                out.append(obj)
        return out
