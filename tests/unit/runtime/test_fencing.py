"""The write fence (syncagent.runtime.fencing): which requests need leadership, the deadline's
states, and the check at each actual send, retries included.

The send-time check lives in httpcore's ``trace`` extension, which a mock transport
(``httpx2_mock``, ``MockTransport``) replaces: those tests talk to a stdlib HTTP server on
loopback through the real connection path, and count what it received.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import httpx2
import pytest

from syncagent.runtime import fencing, leaseclock
from syncagent.runtime.fencing import Fence, NotLeader, fenced, not_leader
from syncagent.runtime.leader import LeaseConfig
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.queue import WorkQueue
from syncagent.runtime.retry import RetryPolicy, RetryTransport
from syncagent.runtime.workers import ReconcileMetrics, run_workers
from tests.support.clock import HandClock
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio

LEASE = LeaseConfig(namespace="ns", name="agent", identity="me")
CM = "/api/v1/namespaces/ns/configmaps/c"


@pytest.mark.parametrize(
    ("method", "path", "needs"),
    [
        ("GET", CM, False),
        ("PATCH", CM, True),
        ("PATCH", f"{CM}?dryRun=All", True),  # a dry run only decides a write
        ("PUT", f"{CM}/status", True),
        ("POST", "/api/v1/namespaces/ns/events", True),
        ("DELETE", CM, True),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/agent", False),
        ("POST", "/apis/coordination.k8s.io/v1/namespaces/ns/leases", False),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/other", True),
        ("POST", "/apis/authentication.k8s.io/v1/tokenreviews", False),
        ("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", False),
    ],
)
def test_which_requests_need_leadership(method, path, needs):
    assert fenced(method, path.split("?")[0], exempt=LEASE.paths()) is needs


def test_the_fence_is_closed_until_leading_then_open_until_the_deadline():
    clock, ended = HandClock(), []
    fence = Fence(lease=str(LEASE), exempt=LEASE.paths(), clock=clock)
    with pytest.raises(NotLeader, match=r"^Lease/ns/agent: PATCH .*/c not sent: this agent does"):
        fence.check("PATCH", CM)
    fence.open_until(110.0, on_expiry=lambda: ended.append(clock.now))
    fence.check("PATCH", CM)
    assert fence.extend(112.0)
    clock.now = 111.9
    fence.check("PATCH", CM)
    fence.check("GET", CM)  # reads never need leadership
    clock.now = 112.5
    with pytest.raises(NotLeader, match=r"leadership ended 0\.500s ago .*the leader makes"):
        fence.check("PATCH", CM)
    with pytest.raises(NotLeader):
        fence.check("DELETE", CM)
    assert ended == [112.5], "the first refusal ends leading, once"
    assert not fence.extend(120.0), "a renewal after the deadline does not reopen it"
    assert fence.refused == 3
    fence.close()
    with pytest.raises(NotLeader, match="does not lead"):
        fence.check("PATCH", CM)


def test_only_a_group_made_of_refusals_is_a_refusal():
    refused = NotLeader("Lease/ns/agent: no")
    assert not_leader(refused) is refused
    assert not_leader(ExceptionGroup("g", [ExceptionGroup("h", [refused]), NotLeader("x")]))
    assert not_leader(ExceptionGroup("g", [refused, ValueError("bug")])) is None
    assert not_leader(ValueError("bug")) is None


def test_the_leadership_clock_runs_through_suspend():
    # CLOCK_BOOTTIME, not the monotonic clock that stops while the machine sleeps.
    before = time.clock_gettime(time.CLOCK_BOOTTIME)
    now = leaseclock.now()
    assert before <= now <= time.clock_gettime(time.CLOCK_BOOTTIME)


class Server:
    """Loopback HTTP/1.1: records each request it received in full, answers the next status."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)
        self.received: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                server.received.append(f"{self.command} {self.path}")
                status = server.statuses.pop(0) if server.statuses else 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_PUT = do_PATCH = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"


@contextmanager
def serving(*statuses: int) -> Iterator[Server]:
    server = Server(*statuses)
    thread = threading.Thread(target=server.http.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.http.shutdown()
        server.http.server_close()


def fenced_client(server: Server, fence: Fence, **retry: object) -> httpx2.AsyncClient:
    transport = RetryTransport(httpx2.AsyncHTTPTransport(), policy=RetryPolicy(**retry))
    http = httpx2.AsyncClient(base_url=server.url, transport=transport)
    fencing.install(http, fence)
    return http


async def test_a_refused_write_is_never_sent_and_leases_and_reads_still_are():
    clock = HandClock()
    fence = Fence(lease=str(LEASE), exempt=LEASE.paths(), clock=clock)
    with serving() as server:
        async with fenced_client(server, fence) as http:
            with pytest.raises(NotLeader):
                await http.patch(CM, content=b"{}")
            await http.get(CM)
            await http.put("/apis/coordination.k8s.io/v1/namespaces/ns/leases/agent", content=b"{}")
    assert server.received == [
        f"GET {CM}",
        "PUT /apis/coordination.k8s.io/v1/namespaces/ns/leases/agent",
    ]


async def test_a_retry_is_checked_at_its_own_send():
    # The PUT is answered 503 and retried; its deadline passes during the backoff: the retry
    # is refused at its send, not re-sent.
    clock = HandClock()
    fence = Fence(lease=str(LEASE), clock=clock)
    fence.open_until(clock.now + 10, on_expiry=lambda: None)

    async def sleep_past_deadline(delay: float) -> None:
        clock.now += 11

    with serving(503) as server:
        transport = RetryTransport(httpx2.AsyncHTTPTransport(), sleep=sleep_past_deadline)
        async with httpx2.AsyncClient(base_url=server.url, transport=transport) as http:
            fencing.install(http, fence)
            with pytest.raises(NotLeader, match="leadership ended"):
                await http.put(CM, content=b"{}")
    assert server.received == [f"PUT {CM}"]


async def test_the_check_comes_after_anything_else_that_runs_before_the_send():
    # A stall right before the headers go out (another trace callback, a GC pause there): the
    # fence still looks at the clock after it.
    clock = HandClock()
    fence = Fence(lease=str(LEASE), clock=clock)
    fence.open_until(clock.now + 10, on_expiry=lambda: None)

    async def stall(event: str, info: dict) -> None:
        if event.endswith(".send_request_headers.started"):
            clock.now += 11

    with serving() as server:
        async with httpx2.AsyncClient(base_url=server.url) as http:
            fencing.install(http, fence)
            with pytest.raises(NotLeader):
                await http.patch(CM, content=b"{}", extensions={"trace": stall})
    assert server.received == []


async def test_a_refused_reconcile_is_requeued_without_backoff():
    metrics, calls = Metrics(), []

    async def reconcile(key: str) -> None:
        calls.append(key)
        if len(calls) == 1:
            async with anyio.create_task_group() as tg:  # as the engine's parallel writes
                tg.start_soon(_refuse)

    async with WorkQueue("q", metrics=metrics) as q, anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_workers(q, reconcile, concurrency=1, metrics=metrics))
        q.add("ns/a")
        await eventually_async(lambda: len(calls) == 2, deadline=5, what="the second reconcile")
        q.shut_down()
    assert q.failures("ns/a") == 0
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result="not_leader") == 1
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result="error") == 0


async def _refuse() -> None:
    raise NotLeader("Lease/ns/agent: PATCH /x not sent")
