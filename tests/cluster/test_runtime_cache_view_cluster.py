"""The watch cache's compact view answers what a reconcile asks, against a real API server.

The cache keeps objects as deflated JSON with an owner index (runtime/compact.py). Held against
the API server's own answers: a cached object equals the server's GET of it, managedFields
included (what convergence, the certain-write rule and adoption read); listing one owner's
children from the index gives exactly the objects whose ownerReferences the server stored with
that owner's UID, and follows changes of owner.
"""

import anyio
import pytest

from syncagent.kube.kinds import CONFIG_MAP
from syncagent.rest.request import MERGE_PATCH, build
from syncagent.rest.transport import call
from syncagent.runtime.watch import Informer, WatchTarget
from syncagent.ssa import managedfields
from syncagent.ssa.certain import holds_entry
from tests.cluster.support.runtime import config_map, create
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio

MANAGER = "cache-view-test"


async def apply(client, namespace: str, name: str, owners: list[dict], **data: str) -> dict:
    body = config_map(namespace, name, labels={"app": "view"}, **data)
    body["metadata"]["ownerReferences"] = owners
    request = build(
        CONFIG_MAP,
        "apply",
        namespace=namespace,
        name=name,
        body=body,
        field_manager=MANAGER,
        force=True,
    )
    return await call(client, request)


def ref(owner: dict, *, controller: bool) -> dict:
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": controller,
    }


async def server_children(client, namespace: str, uid: str) -> list[str]:
    params = {"labelSelector": "app=view"}
    listed = await call(client, build(CONFIG_MAP, "list", namespace=namespace, params=params))
    return sorted(
        o["metadata"]["name"]
        for o in listed["items"]
        if any(r["uid"] == uid for r in o["metadata"].get("ownerReferences") or ())
    )


def cached_children(informer: Informer, namespace: str, uid: str) -> list[str]:
    return [o["metadata"]["name"] for o in informer.cache.list(namespace, owner=uid)]


async def test_cached_view_equals_the_server_and_indexes_owners(async_client, namespace):
    one = await create(async_client, config_map(namespace, "owner-one"))
    two = await create(async_client, config_map(namespace, "owner-two"))
    await apply(async_client, namespace, "a", [ref(one, controller=True)], k="1")
    await apply(
        async_client, namespace, "b", [ref(one, controller=False), ref(two, controller=True)]
    )
    await apply(async_client, namespace, "c", [], k="3")
    # A second manager (an Update) on "a": adoption and conflicts read every entry.
    update = build(
        CONFIG_MAP,
        "patch",
        namespace=namespace,
        name="a",
        body={"data": {"other": "x"}},
        content_type=MERGE_PATCH,
        field_manager="someone-else",
    )
    await call(async_client, update)
    target = WatchTarget(CONFIG_MAP, namespace=namespace, label_selector="app=view")
    informer = Informer(async_client, target)
    async with anyio.create_task_group() as tg:
        await tg.start(informer.run)
        with anyio.fail_after(30):
            await informer.cache.wait_synced()
        for name in ("a", "b", "c"):
            live = await call(
                async_client, build(CONFIG_MAP, "get", namespace=namespace, name=name)
            )
            await eventually_async(
                lambda live=live, name=name: informer.cache.get(namespace, name) == live,
                deadline=30,
                what=f"the cached {name} to equal the server's",
            )
            cached = informer.cache.get(namespace, name)
            assert managedfields.decode(cached) == managedfields.decode(live)
            assert holds_entry(cached, manager=MANAGER, subresource="")
        assert [e.manager for e in managedfields.decode(informer.cache.get(namespace, "a"))] == [
            MANAGER,
            "someone-else",
        ]
        for owner in (one, two):
            uid = owner["metadata"]["uid"]
            assert cached_children(informer, namespace, uid) == await server_children(
                async_client, namespace, uid
            )
        assert cached_children(informer, namespace, one["metadata"]["uid"]) == ["a", "b"]

        # "b" leaves owner one, "c" joins it: the index follows the watch.
        await apply(async_client, namespace, "b", [ref(two, controller=True)])
        await apply(async_client, namespace, "c", [ref(one, controller=True)], k="3")
        uid = one["metadata"]["uid"]
        want = await server_children(async_client, namespace, uid)
        assert want == ["a", "c"]
        await eventually_async(
            lambda: cached_children(informer, namespace, uid) == want,
            deadline=30,
            what="the owner index to follow the changes",
        )
        tg.cancel_scope.cancel()
