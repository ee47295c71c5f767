"""The recorder writes several Events at once, and a repeat waits for the Event it repeats
(HTTP-level: the server below answers only once four writes are in flight together)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import orjson
import pytest

from syncagent.runtime.events import NORMAL, EventMetrics, EventRecorder, ObjectRef
from syncagent.runtime.metrics import Metrics
from tests.support.fakeapi import FakeApi
from tests.support.polling import eventually_async


class Server(FakeApi):
    """Holds every Event create until ``together`` writes are in flight at once."""

    def __init__(self, together: int) -> None:
        super().__init__()
        self.together = together
        self.in_flight = 0
        self.events: list[tuple[str, str]] = []
        self.released = anyio.Event()

    async def answer(self, request: httpx2.Request) -> httpx2.Response:
        body = orjson.loads(request.content)
        self.events.append((request.method, body.get("reason") or request.url.path))
        if request.method == "POST":
            self.in_flight += 1
            if self.in_flight >= self.together:
                self.released.set()
            await self.released.wait()
        return httpx2.Response(200, json={"metadata": {"name": "e"}, **body})


def ref(name: str) -> ObjectRef:
    return ObjectRef("v1", "ConfigMap", "ns", name, "uid-" + name)


def recorder_on(server: Server, **options: Any) -> tuple[httpx2.AsyncClient, EventRecorder]:
    client = server.client(timeout=5.0)
    options.setdefault("metrics", Metrics())
    return client, EventRecorder(client, **options)


@asynccontextmanager
async def running(recorder: EventRecorder) -> AsyncIterator[None]:
    """The recorder's loop for the body (at most 20 s), then cancelled."""
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            await group.start(recorder.run)
            yield
            group.cancel_scope.cancel()


@pytest.mark.anyio
async def test_four_writers_at_once_and_a_repeat_is_aggregated_after_its_event():
    server = Server(together=4)
    metrics = Metrics()
    client, recorder = recorder_on(server, metrics=metrics, writers=4)
    async with running(recorder):
        recorder.record(ref("a"), type=NORMAL, reason="A", message="same")
        recorder.record(ref("a"), type=NORMAL, reason="A", message="same")  # a repeat
        for name in ("b", "c", "d"):
            recorder.record(ref(name), type=NORMAL, reason=name.upper(), message="m")
        await eventually_async(
            lambda: (
                metrics.of(EventMetrics).events.value(
                    type="Normal", reason="A", outcome="aggregated"
                )
                == 1
            ),
            deadline=15,
            what="the repeat aggregated",
        )
    posts = sorted(reason for method, reason in server.events if method == "POST")
    assert posts == ["A", "B", "C", "D"]  # written together: the server waited for all four
    assert [method for method, _ in server.events].count("PATCH") == 1
    assert server.events[-1][0] == "PATCH"  # the repeat, after its Event was created
    await client.aclose()


@pytest.mark.anyio
async def test_events_wait_while_reconciles_wait_then_each_is_written():
    server = Server(together=1)
    waiting = [True]  # reconciles waiting for a worker
    client, recorder = recorder_on(server, busy=lambda: waiting[0])
    async with running(recorder):
        for name in ("g-a", "g-b"):
            recorder.record(ref("g"), type=NORMAL, reason="CreateX", message=f"Created {name}")
        await anyio.wait_all_tasks_blocked()
        assert server.events == []  # held while reconciles wait
        waiting[0] = False
        await eventually_async(lambda: len(server.events) == 2, deadline=15, what="both Events")
    assert server.events == [("POST", "CreateX"), ("POST", "CreateX")]  # one per event
    await client.aclose()


@pytest.mark.anyio
async def test_an_event_waits_for_busy_reconciles_only_so_long():
    server = Server(together=1)
    client, recorder = recorder_on(server, busy=lambda: True, max_defer=2.0)
    async with running(recorder):
        recorder.record(ref("g"), type=NORMAL, reason="A", message="m")
        await anyio.wait_all_tasks_blocked()
        assert server.events == []
        await eventually_async(lambda: server.events, deadline=15, what="the Event")
    assert server.events == [("POST", "A")]
    await client.aclose()


@pytest.mark.anyio
async def test_while_reconciles_wait_the_queue_is_kept_under_half_full():
    server = Server(together=1)
    client, recorder = recorder_on(server, busy=lambda: True, max_queued=4)
    async with running(recorder):
        recorder.record(ref("a"), type=NORMAL, reason="A", message="m")
        await anyio.wait_all_tasks_blocked()
        assert server.events == []
        recorder.record(ref("b"), type=NORMAL, reason="B", message="m")  # half full
        await eventually_async(lambda: server.events, deadline=15, what="an Event")
        await anyio.wait_all_tasks_blocked()
    assert server.events == [("POST", "A")]  # the oldest; B waits again
    await client.aclose()


@pytest.mark.anyio
async def test_a_flush_at_shutdown_takes_what_waits_for_a_writer():
    server = Server(together=2)  # the first write is answered once the flush's is sent too
    client, recorder = recorder_on(server, writers=1)
    async with running(recorder):
        recorder.record(ref("a"), type=NORMAL, reason="A", message="m")
        await eventually_async(lambda: server.events, deadline=15, what="A in flight")
        recorder.record(ref("b"), type=NORMAL, reason="B", message="m")
        await anyio.wait_all_tasks_blocked()  # the recorder waits for its one writer
        await recorder.flush()
        await anyio.wait_all_tasks_blocked()  # and then finds B gone: no error
    assert sorted(reason for _, reason in server.events) == ["A", "B"]
    await client.aclose()
