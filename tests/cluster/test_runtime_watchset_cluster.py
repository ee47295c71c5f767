import anyio
import pytest

from syncagent.cli.pathways import PROGRAMS
from syncagent.kube import kinds
from syncagent.programs import capabilities as caps
from syncagent.rest.request import build
from syncagent.rest.transport import call
from syncagent.runtime.cache import ChangeType
from syncagent.runtime.client import RequestMetrics, make_client
from syncagent.runtime.discovery import Discovery
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.watch import WatchTarget
from syncagent.runtime.watchset import WatchSet
from tests.cluster.support.runtime import config_map, create
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio


def lws(namespace: str, name: str) -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {
                    "spec": {"containers": [{"name": "main", "image": "registry.example/a:1"}]}
                },
            }
        },
    }


DECLARED = PROGRAMS.capabilities()


def served(*gvrs) -> caps.Capabilities:
    return caps.resolve(
        set(gvrs), caps.capability_overrides((), declared=DECLARED), declared=DECLARED
    )


async def test_a_watch_exists_only_while_its_api_is_served(async_client, namespace):
    create_lws = build(
        kinds.LEADER_WORKER_SET, "create", namespace=namespace, body=lws(namespace, "w")
    )
    await call(async_client, create_lws)
    await create(async_client, config_map(namespace, "c"))
    ws = WatchSet(async_client, optional=PROGRAMS.group_versions(), metrics=Metrics())
    lws_target = WatchTarget(kinds.LEADER_WORKER_SET, namespace=namespace)
    lws_cache = ws.add(lws_target)
    cm_target = WatchTarget(kinds.CONFIG_MAP, namespace=namespace)
    cm_cache = ws.add(cm_target)
    changes = []
    lws_cache.add_handler(changes.append)
    async with anyio.create_task_group() as tg:
        await tg.start(ws.run)
        # Before discovery: core watches run, optional ones do not.
        assert ws.running() == [cm_target]
        with anyio.fail_after(10):
            await ws.wait_synced()
        assert cm_cache.get(namespace, "c") is not None

        ws.update(served(kinds.LEADER_WORKER_SET))
        assert lws_target in ws.running()
        await eventually_async(
            lambda: lws_cache.get(namespace, "w") is not None, deadline=10, what="w"
        )

        ws.update(served())  # the LWS API went away
        assert lws_target not in ws.running()
        assert len(lws_cache) == 0
        assert not lws_cache.synced
        assert changes[-1].type is ChangeType.DELETED
        assert ws.synced  # only running watches count
        tg.cancel_scope.cancel()


async def test_follows_discovery_with_a_client_from_a_kubeconfig(control_plane, namespace):
    metrics = Metrics()
    client = make_client(kubeconfig=control_plane.kubeconfig, metrics=metrics)
    try:
        discovery = Discovery(
            client,
            resolve=caps.resolver(
                caps.capability_overrides((), declared=DECLARED), declared=DECLARED
            ),
            group_versions=PROGRAMS.group_versions(),
            metrics=metrics,
        )
        await discovery.start()
        ws = WatchSet(
            client,
            optional=PROGRAMS.group_versions(),
            metrics=metrics,
            on_not_found=discovery.request_refresh,
        )
        target = WatchTarget(kinds.LEADER_WORKER_SET, namespace=namespace)
        cache = ws.add(target)
        async with anyio.create_task_group() as tg:
            await tg.start(ws.run, discovery)
            assert ws.running() == [target]
            with anyio.fail_after(10):
                await ws.wait_synced()
            tg.cancel_scope.cancel()
        assert cache.synced
        # Every request went through the instrumented client.
        assert (
            metrics.of(RequestMetrics).api_requests.total(verb="get", resource="") >= 4
        )  # discovery documents
        assert (
            metrics.of(RequestMetrics).api_requests.total(verb="list", resource="leaderworkersets")
            == 1
        )
    finally:
        await client.aclose()
