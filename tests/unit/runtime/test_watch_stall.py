"""A watch whose server never answers (found by the chaos tier: its fault proxy stalls requests
past the agent's timeout, watches included). The stream's long read timeout must not apply to
the first response: the informer gives up after the client's request timeout and watches again,
instead of missing every change for the whole watch timeout (5 to 10 minutes)."""

from __future__ import annotations

import anyio
import httpx2
import orjson
import pytest

from syncagent.kube.kinds import CONFIG_MAP
from syncagent.runtime.watch import Informer, WatchTarget
from tests.support.fakeapi import FakeApi
from tests.support.polling import eventually_async


def config_map(name: str, rv: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv},
    }


class Server(FakeApi):
    """Lists one object; the second watch sends one event, every other one never answers."""

    def __init__(self) -> None:
        super().__init__()
        self.watches = 0

    async def answer(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.params.get("watch") != "true":
            body = {
                "kind": "ConfigMapList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": "1"},
            }
            return httpx2.Response(200, json={**body, "items": [config_map("a", "1")]})
        self.watches += 1
        if self.watches != 2:
            await anyio.sleep_forever()
        event = {"type": "ADDED", "object": config_map("b", "2")}
        return httpx2.Response(200, content=orjson.dumps(event) + b"\n")


@pytest.mark.anyio
async def test_a_watch_that_never_answers_is_abandoned_after_the_request_timeout():
    server = Server()
    client = server.client(timeout=0.5)
    informer = Informer(client, WatchTarget(CONFIG_MAP, namespace="ns"), watch_timeout=60)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(informer.run)
            await eventually_async(
                lambda: informer.cache.get("ns", "b"), deadline=15, what="the second watch's event"
            )
            group.cancel_scope.cancel()
    assert server.watches >= 2
    await client.aclose()
