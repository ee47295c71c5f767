"""The per-request retry policy (syncagent.runtime.retry): a ``RetryTransport`` around a real
transport, and installed in the client the agent builds (``make_client``); ``httpx2_mock``
answers what they send (through ``FakeApi``).

What is retried follows client-go's rules for a request: 429 always (the server did not act),
after ``Retry-After``; 5xx and broken connections only for requests safe to repeat.
"""

from __future__ import annotations

import httpx2
import pytest

from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call
from syncagent.runtime.backoff import Backoff
from syncagent.runtime.client import make_client
from syncagent.runtime.fencing import NotLeader
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.retry import APPLY_PATCH, RetryPolicy, RetryTransport
from tests.support.fakeapi import BASE, FakeApi

PATH = "/api/v1/namespaces/ns/configmaps"


class Server(FakeApi):
    """Answers each request with the next planned reply (a status, or an exception to raise)."""

    def __init__(self, *replies: int | tuple[int, dict[str, str]] | type[Exception]) -> None:
        super().__init__()
        self.replies = list(replies)

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        reply = self.replies.pop(0) if self.replies else 200
        if isinstance(reply, type):
            raise reply("injected", request=request)
        status, headers = reply if isinstance(reply, tuple) else (reply, {})
        body = {"kind": "Status", "code": status} if status >= 400 else cm_json()
        return httpx2.Response(status, json=body, headers=headers)


def cm_json() -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def client_for(server: Server, *, policy: RetryPolicy | None = None, metrics=None, sleeps=None):
    transport = RetryTransport(
        server.transport(),
        policy=policy,
        metrics=metrics,
        sleep=sleeps or Sleeps(),
    )
    return httpx2.AsyncClient(base_url=BASE, transport=transport)


@pytest.mark.anyio
async def test_429_is_retried_after_retry_after_for_any_verb():
    server, sleeps, metrics = Server((429, {"Retry-After": "2"})), Sleeps(), Metrics()
    async with client_for(server, sleeps=sleeps, metrics=metrics) as http:
        response = await http.post(PATH, json=cm_json())
    assert response.status_code == 200
    assert server.methods == ["POST", "POST"]
    assert sleeps.delays == [2.0]
    assert "syncagent_api_retries_total" in metrics.render()
    assert 'reason="429",verb="create"' in metrics.render()


@pytest.mark.anyio
@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_server_errors_are_retried_for_reads_and_applies(status):
    server = Server(status, 200, status)
    async with client_for(server) as http:
        assert (await http.get(f"{PATH}/c")).status_code == 200
        apply = {"Content-Type": APPLY_PATCH}
        assert (await http.patch(f"{PATH}/c", content=b"{}", headers=apply)).status_code == 200
    assert server.methods == ["GET", "GET", "PATCH", "PATCH"]


@pytest.mark.anyio
async def test_an_apply_the_schema_refuses_is_not_retried():
    # kube-apiserver's answer to an apply setting a field the CRD's schema lacks: HTTP 500,
    # and the same every time.
    message = (
        "failed to create typed patch object (ns/g; nvidia.com/v1beta1, "
        "Kind=DynamoGraphDeployment): .status.routing: field not declared in schema"
    )

    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, json={"kind": "Status", "code": 500, "message": message})

    api = FakeApi(handle)
    transport = RetryTransport(api.transport(), sleep=Sleeps())
    async with httpx2.AsyncClient(base_url=BASE, transport=transport) as http:
        apply = {"Content-Type": APPLY_PATCH}
        response = await http.patch(f"{PATH}/c", content=b"{}", headers=apply)
    assert response.status_code == 500
    assert response.json()["message"] == message
    assert api.methods == ["PATCH"]


@pytest.mark.anyio
async def test_server_errors_are_not_retried_for_a_create_or_a_merge_patch():
    server = Server(500, 500)
    async with client_for(server) as http:
        assert (await http.post(PATH, json=cm_json())).status_code == 500
        merge = {"Content-Type": "application/merge-patch+json"}
        response = await http.patch(f"{PATH}/c", content=b"{}", headers=merge)
        assert response.status_code == 500
    assert server.methods == ["POST", "PATCH"]


@pytest.mark.anyio
async def test_a_refused_connection_is_retried_even_for_a_create():
    server = Server(httpx2.ConnectError)
    async with client_for(server) as http:
        assert (await http.post(PATH, json=cm_json())).status_code == 200
    assert server.methods == ["POST", "POST"]


@pytest.mark.anyio
async def test_a_reset_after_sending_is_retried_only_when_repeatable():
    server = Server(httpx2.ReadError, 200, httpx2.ReadError)
    async with client_for(server) as http:
        assert (await http.delete(f"{PATH}/c")).status_code == 200
        with pytest.raises(httpx2.ReadError):
            await http.post(PATH, json=cm_json())
    assert server.methods == ["DELETE", "DELETE", "POST"]


@pytest.mark.anyio
async def test_attempts_are_bounded_and_the_last_answer_returned():
    server, metrics = Server(*[503] * 10), Metrics()
    async with client_for(server, policy=RetryPolicy(attempts=3), metrics=metrics) as http:
        assert (await http.get(f"{PATH}/c")).status_code == 503
    assert server.methods == ["GET"] * 3
    assert 'syncagent_api_retries_total{reason="503",verb="get"} 2.0' in metrics.render()


@pytest.mark.anyio
async def test_total_time_is_bounded():
    now = [0.0]
    sleeps = Sleeps()

    async def sleep(delay: float) -> None:
        await sleeps(delay)
        now[0] += delay

    server = Server(*[(429, {"Retry-After": "4"})] * 10)
    transport = RetryTransport(
        server.transport(),
        policy=RetryPolicy(attempts=10, total=10.0),
        clock=lambda: now[0],
        sleep=sleep,
    )
    async with httpx2.AsyncClient(base_url=BASE, transport=transport) as http:
        assert (await http.get(f"{PATH}/c")).status_code == 429
    # 4 + 4 fit in 10 s; a third wait would end at 12 s
    assert sleeps.delays == [4.0, 4.0]


@pytest.mark.anyio
async def test_a_retry_after_beyond_the_cap_is_left_to_the_caller():
    server = Server((429, {"Retry-After": "60"}))
    async with client_for(server, policy=RetryPolicy(max_retry_after=10)) as http:
        assert (await http.get(f"{PATH}/c")).status_code == 429
    assert server.methods == ["GET"]


@pytest.mark.anyio
async def test_a_watch_is_retried_before_its_stream_starts():
    server = Server((429, {"Retry-After": "0"}), 500)
    async with (
        client_for(server) as http,
        http.stream("GET", PATH, params={"watch": "true"}) as response,
    ):
        assert response.status_code == 200
    assert server.methods == ["GET"] * 3


KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: t, cluster: {server: "https://api.test"}}]
users: [{name: u, user: {token: t0}}]
contexts: [{name: t, context: {cluster: t, user: u}}]
current-context: t
"""


@pytest.mark.anyio
async def test_the_agents_client_retries_through_the_installed_transport(tmp_path):
    """What the agent runs: the client ``make_client`` builds from a kubeconfig, retries,
    timing and metrics installed, its transport the real one."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    metrics = Metrics()
    retry = RetryPolicy(backoff=Backoff(base=0.01, cap=0.01, jitter=0.0))
    http = make_client(kubeconfig=kubeconfig, metrics=metrics, retry=retry)
    server = Server((429, {"Retry-After": "0"}), 503)
    server.register()
    config_map = Resource.of("v1", "ConfigMap", "configmaps")
    got = await call(http, build(config_map, "get", namespace="ns", name="c"))
    assert got["metadata"]["name"] == "c"
    assert server.methods == ["GET"] * 3
    assert {r.headers["Authorization"] for r in server.requests} == {"Bearer t0"}
    assert 'reason="429"' in metrics.render()
    assert 'reason="503"' in metrics.render()
    await http.aclose()


@pytest.mark.anyio
async def test_a_write_the_fence_refused_is_not_retried():
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise NotLeader("Lease/ns/agent: PUT not sent")

    sleeps = Sleeps()
    api = FakeApi(refuse)
    transport = RetryTransport(api.transport(), sleep=sleeps)
    async with httpx2.AsyncClient(base_url=BASE, transport=transport) as http:
        with pytest.raises(NotLeader):
            await http.put(f"{PATH}/c", json=cm_json())
    assert api.methods == ["PUT"]
    assert sleeps.delays == []
