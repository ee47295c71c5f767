import anyio
import pytest

from syncagent.kube.kinds import EVENT
from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call
from syncagent.runtime.events import NORMAL, WARNING, EventMetrics, EventRecorder, ObjectRef
from syncagent.runtime.metrics import Metrics
from tests.cluster.support.runtime import config_map, create
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio


async def events_about(client, namespace: str, name: str) -> list[dict]:
    params = {"fieldSelector": f"involvedObject.name={name}"}
    page = await call(client, build(EVENT, "list", namespace=namespace, params=params))
    return page["items"]


async def test_events_are_created_and_repeats_aggregated(async_client, namespace):
    cm = await create(async_client, config_map(namespace, "subject"))
    ref = ObjectRef.of({**cm, "apiVersion": "v1", "kind": "ConfigMap"})
    metrics = Metrics()
    recorder = EventRecorder(async_client, instance="agent-0", metrics=metrics)

    first = await recorder.emit_now(ref, type=WARNING, reason="ValidationFailed", message="bad")
    await recorder.emit_now(ref, type=WARNING, reason="ValidationFailed", message="bad")
    await recorder.emit_now(ref, type=WARNING, reason="ValidationFailed", message="bad")
    other = await recorder.emit_now(ref, type=NORMAL, reason="CreateDeployment", message="x")

    items = {
        e["metadata"]["name"]: e for e in await events_about(async_client, namespace, "subject")
    }
    assert set(items) == {first, other}
    repeated = items[first]
    assert repeated["count"] == 3
    assert repeated["type"] == "Warning"
    assert repeated["reason"] == "ValidationFailed"
    assert repeated["message"] == "bad"
    assert repeated["involvedObject"]["uid"] == cm["metadata"]["uid"]
    assert repeated["involvedObject"]["kind"] == "ConfigMap"
    assert repeated["source"]["component"] == "syncagent"
    assert repeated["reportingComponent"] == "syncagent"
    assert repeated["reportingInstance"] == "agent-0"
    assert repeated["lastTimestamp"] >= repeated["firstTimestamp"]
    assert items[other]["count"] == 1
    assert (
        metrics.of(EventMetrics).events.value(
            type="Warning", reason="ValidationFailed", outcome="created"
        )
        == 1
    )
    assert (
        metrics.of(EventMetrics).events.value(
            type="Warning", reason="ValidationFailed", outcome="aggregated"
        )
        == 2
    )

    # The same Event through the events.k8s.io/v1 API (what newer kubectl reads).
    events_v1 = Resource.of("events.k8s.io/v1", "Event", "events")
    new_api = await call(async_client, build(events_v1, "get", namespace=namespace, name=first))
    assert new_api["deprecatedCount"] == 3
    assert new_api["regarding"]["name"] == "subject"
    assert new_api["note"] == "bad"


async def test_an_expired_event_is_written_anew(async_client, namespace):
    cm = await create(async_client, config_map(namespace, "subject"))
    ref = ObjectRef.of({**cm, "apiVersion": "v1", "kind": "ConfigMap"})
    recorder = EventRecorder(async_client, metrics=Metrics())
    first = await recorder.emit_now(ref, type=NORMAL, reason="R", message="m")
    await call(async_client, build(EVENT, "delete", namespace=namespace, name=first))
    again = await recorder.emit_now(ref, type=NORMAL, reason="R", message="m")
    assert again
    assert again != first
    [item] = await events_about(async_client, namespace, "subject")
    assert item["metadata"]["name"] == again
    assert item["count"] == 1


async def test_recorded_events_are_emitted_in_the_background(async_client, namespace):
    cm = await create(async_client, config_map(namespace, "subject"))
    ref = ObjectRef.of({**cm, "apiVersion": "v1", "kind": "ConfigMap"})
    recorder = EventRecorder(async_client, metrics=Metrics())
    async with anyio.create_task_group() as tg:
        await tg.start(recorder.run)
        for _ in range(2):
            recorder.record(ref, type=NORMAL, reason="Queued", message="later")

        async def aggregated() -> bool:
            items = await events_about(async_client, namespace, "subject")
            return len(items) == 1 and items[0]["count"] == 2

        await eventually_async(aggregated, deadline=10, what="the queued events")
        tg.cancel_scope.cancel()


async def test_a_failed_write_is_reported_not_raised(async_client):
    ref = ObjectRef("v1", "ConfigMap", "no-such-namespace-x", "subject", "")
    metrics = Metrics()
    recorder = EventRecorder(async_client, metrics=metrics)
    assert await recorder.emit_now(ref, type=NORMAL, reason="R", message="m") == ""
    assert metrics.of(EventMetrics).events.value(type="Normal", reason="R", outcome="error") == 1


async def test_events_wait_while_reconciles_wait_and_follow_their_writes(async_client, namespace):
    cm = await create(async_client, config_map(namespace, "subject"))
    ref = ObjectRef.of({**cm, "apiVersion": "v1", "kind": "ConfigMap"})
    waiting = [True]  # reconciles waiting for a worker
    recorder = EventRecorder(async_client, metrics=Metrics(), busy=lambda: waiting[0])
    names = ("g-frontend", "g-decode", "g-worker")
    async with anyio.create_task_group() as tg:
        await tg.start(recorder.run)
        for name in names:
            recorder.record(ref, type=NORMAL, reason="CreateX", message=f"Created X {name}")
        await anyio.wait_all_tasks_blocked()
        # A reconcile's own write, made while its events wait: it does not queue behind them.
        marker = await create(async_client, config_map(namespace, "marker"))
        waiting[0] = False

        async def arrived() -> list[dict] | None:
            items = await events_about(async_client, namespace, "subject")
            return items if len(items) == len(names) else None

        events = await eventually_async(arrived, deadline=10, what="the three Events")
        tg.cancel_scope.cancel()
    assert sorted(e["message"] for e in events) == sorted(f"Created X {n}" for n in names)
    assert all(e["count"] == 1 for e in events)
    # Written after the reconcile's write (etcd revisions order every write).
    marked = int(marker["metadata"]["resourceVersion"])
    assert all(int(e["metadata"]["resourceVersion"]) > marked for e in events)
