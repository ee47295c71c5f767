import anyio
import httpx2
import orjson
import pytest

from syncagent.kube.kinds import CONFIG_MAP, EVENT, LEADER_WORKER_SET
from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call, stream
from syncagent.runtime.cache import Cache, ChangeType, self_key
from syncagent.runtime.client import RequestMetrics, instrument
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.watch import Informer, WatchMetrics, WatchTarget
from tests.cluster.support.runtime import (
    compact_etcd,
    config_map,
    create,
    create_event,
    delete,
    event,
    patch_data,
)
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio

LABELS = {"app": "watched"}


def target(namespace: str) -> WatchTarget:
    return WatchTarget(CONFIG_MAP, namespace=namespace, label_selector="app=watched")


def names(cache: Cache) -> set[str]:
    return {obj["metadata"]["name"] for obj in cache.list()}


def requests(metrics: Metrics, verb: str) -> float:
    return metrics.of(RequestMetrics).api_requests.total(verb=verb, resource="configmaps")


async def test_lists_then_watches_with_a_label_selector(async_client, namespace):
    metrics = Metrics()
    await create(async_client, config_map(namespace, "before", labels=LABELS, k="1"))
    await create(async_client, config_map(namespace, "other", labels={"app": "x"}))
    informer = Informer(async_client, target(namespace), metrics=metrics)
    changes = []
    informer.cache.add_handler(changes.append)
    async with anyio.create_task_group() as tg:
        await tg.start(informer.run)
        with anyio.fail_after(10):
            await informer.cache.wait_synced()
        assert names(informer.cache) == {"before"}
        # List items of built-in kinds come without kind/apiVersion; the cache fills them in.
        assert informer.cache.get(namespace, "before")["kind"] == "ConfigMap"

        await create(async_client, config_map(namespace, "after", labels=LABELS))
        await patch_data(async_client, namespace, "before", k="2")
        await delete(async_client, namespace, "before")
        await create(async_client, config_map(namespace, "other2", labels={"app": "x"}))
        await eventually_async(
            lambda: (
                names(informer.cache) == {"after"}
                and any(c.type is ChangeType.DELETED for c in changes)
            ),
            deadline=10,
            what="watch events",
        )
        tg.cancel_scope.cancel()
    seen = [(c.type, c.name) for c in changes]
    assert seen == [
        (ChangeType.ADDED, "before"),
        (ChangeType.ADDED, "after"),
        (ChangeType.MODIFIED, "before"),
        (ChangeType.DELETED, "before"),
    ]
    assert self_key(changes[-1].old) == [f"{namespace}/before"]
    assert changes[-1].old["data"] == {"k": "2"}
    assert metrics.of(WatchMetrics).watch_relists.value(resource=f"{namespace}/configmaps") == 1


async def test_resumes_from_the_last_resource_version_without_listing_again(
    async_client, namespace
):
    metrics = Metrics()
    instrument(async_client, metrics=metrics)
    informer = Informer(async_client, target(namespace), metrics=metrics, watch_timeout=1)
    async with anyio.create_task_group() as tg:
        await tg.start(informer.run)
        with anyio.fail_after(10):
            await informer.cache.wait_synced()
        # The server ends each watch after 1 s; wait for the informer to have reconnected.
        await eventually_async(
            lambda: requests(metrics, "watch") >= 2, deadline=10, what="a re-watch"
        )
        await create(async_client, config_map(namespace, "late", labels=LABELS))
        await eventually_async(lambda: names(informer.cache) == {"late"}, deadline=10, what="late")
        tg.cancel_scope.cancel()
    assert requests(metrics, "list") == 1
    assert metrics.of(WatchMetrics).watch_relists.value(resource=f"{namespace}/configmaps") == 1


def events_target(namespace: str) -> WatchTarget:
    return WatchTarget(EVENT, namespace=namespace, label_selector="app=watched")


async def test_server_serves_old_resource_versions_from_its_watch_cache(async_client, namespace):
    """What the real server does, part 1: a watch-cached resource (as every kind the agent
    watches) serves a watch from resourceVersion 1 while its cache still reaches back that far,
    even after etcd compacted that history; no 410. The cache reaches back to the server's start
    only until it first evicts an event, so the kind is one no other test writes: PodTemplates
    (the agent writes ConfigMaps, and a session's worth of them fills that cache)."""
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "x", "namespace": namespace, "labels": LABELS},
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    }
    pod_template = Resource.of("v1", "PodTemplate", "podtemplates")
    await call(async_client, build(pod_template, "create", namespace=namespace, body=template))
    first = await first_event(async_client, pod_template, namespace)
    assert first["type"] == "ADDED"


async def test_server_answers_a_compacted_resource_version_with_410(
    async_client, namespace, control_plane
):
    """Part 2: a resource without a watch cache (Events) is watched from etcd directly; after
    compaction a watch from an older resourceVersion gets an ERROR event holding a 410 Status
    (inside a 200 response)."""
    await create_event(async_client, event(namespace, "e1", labels=LABELS))
    await compact_etcd(control_plane)
    first = await first_event(async_client, EVENT, namespace)
    assert first["type"] == "ERROR"
    assert first["object"]["code"] == 410
    assert first["object"]["reason"] in ("Expired", "Gone")


async def first_event(client, resource: Resource, namespace: str) -> dict:
    params = {"resourceVersion": "1", "timeoutSeconds": "5"}
    request = build(resource, "watch", namespace=namespace, params=params)
    async with stream(client, request, request_timeout=httpx2.Timeout(10.0)) as resp:
        if resp.status_code == 410:
            return {"type": "ERROR", "object": orjson.loads(await resp.aread())}
        assert resp.status_code == 200
        async for line in resp.aiter_lines():
            if line.strip():
                return orjson.loads(line)
    raise AssertionError(f"watch of {resource.plural} from resourceVersion 1 sent nothing")


async def test_relists_after_410_and_reports_what_vanished(async_client, namespace, control_plane):
    metrics = Metrics()
    instrument(async_client, metrics=metrics)
    await create_event(async_client, event(namespace, "kept", labels=LABELS))
    await create_event(async_client, event(namespace, "unlabelled"))
    await compact_etcd(control_plane)
    # A cache with state from an earlier watch: "ghost" was deleted while nobody watched.
    cache: Cache = Cache("events")
    cache.upsert(event(namespace, "ghost", labels=LABELS))
    changes = []
    cache.add_handler(changes.append)
    informer = Informer(
        async_client, events_target(namespace), cache=cache, resource_version="1", metrics=metrics
    )
    async with anyio.create_task_group() as tg:
        await tg.start(informer.run)
        with anyio.fail_after(10):
            await cache.wait_synced()
        assert names(cache) == {"kept"}
        await create_event(async_client, event(namespace, "new", labels=LABELS))
        await eventually_async(lambda: names(cache) == {"kept", "new"}, deadline=10, what="new")
        tg.cancel_scope.cancel()
    assert (ChangeType.DELETED, "ghost") in [(c.type, c.name) for c in changes]
    label = f"{namespace}/events"
    assert metrics.of(WatchMetrics).watch_relists.value(resource=label) == 1
    assert metrics.of(RequestMetrics).api_requests.total(verb="list", resource="events") == 1
    # The expired watch, then the one from the list's resourceVersion.
    assert metrics.of(RequestMetrics).api_requests.total(verb="watch", resource="events") == 2
    assert int(informer.resource_version) > 1


async def test_watches_a_custom_resource(async_client, namespace):
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "w", "namespace": namespace},
        "spec": {
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {
                    "spec": {"containers": [{"name": "main", "image": "registry.example/a:1"}]}
                },
            }
        },
    }
    target_ = WatchTarget(LEADER_WORKER_SET, namespace=namespace)
    informer = Informer(async_client, target_, metrics=Metrics())
    async with anyio.create_task_group() as tg:
        await tg.start(informer.run)
        with anyio.fail_after(10):
            await informer.cache.wait_synced()
        await call(async_client, build(LEADER_WORKER_SET, "create", namespace=namespace, body=lws))
        await eventually_async(
            lambda: informer.cache.get(namespace, "w") is not None, deadline=10, what="lws"
        )
        tg.cancel_scope.cancel()
    assert informer.cache.get(namespace, "w")["kind"] == "LeaderWorkerSet"
