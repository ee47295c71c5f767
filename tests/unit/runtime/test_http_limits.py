"""The metrics/probe server cannot be knocked over: idle and slow connections are closed before
their headers are whole, and an accept that fails for want of file descriptors (EMFILE) is
logged and survived (a subprocess with a low fd limit).
"""

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import anyio.abc
import pytest

from syncagent.rest.resource import Resource
from syncagent.runtime import http
from syncagent.runtime.health import Health
from syncagent.runtime.metrics import Metrics
from tests.support.polling import eventually, eventually_async
from tests.support.rawhttp import fetch, get

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[3]

# The server alone, left with `spare` file descriptors once it listens.
SERVER = """
import os, resource, sys
import anyio
from syncagent.rest.resource import Resource
from syncagent.runtime import http
from syncagent.runtime.health import Health
from syncagent.runtime.logging import configure_logging
from syncagent.runtime.metrics import Metrics

async def main(spare: int) -> None:
    configure_logging(level="info")
    table = http.routes(metrics=Metrics(), health=Health())
    async with anyio.create_task_group() as tg:
        port = await tg.start(http.serve, "127.0.0.1:0", table)
        used = len(os.listdir("/proc/self/fd"))
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (used + spare, hard))
        print(port, flush=True)

anyio.run(main, int(sys.argv[1]))
"""


def idle_connections(port: int, count: int) -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]


def healthz(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
            conn.sendall(get("/healthz"))
            return conn.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def test_an_accept_out_of_file_descriptors_is_logged_and_survived():
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, "4"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True).start()
    try:
        port = int(proc.stdout.readline())
        # More connections than descriptors left: the server's accepts run out (EMFILE).
        held = idle_connections(port, 12)
        eventually(
            lambda: any("socket.accept() out of system resource" in line for line in errors),
            deadline=20,
            what="the failed accept to be logged",
        )
        assert proc.poll() is None, "".join(errors)
        assert any("[Errno 24]" in line for line in errors), "".join(errors)
        for conn in held:
            conn.close()
        # Once descriptors are free again it answers, as the same process.
        eventually(lambda: healthz(port), deadline=30, what="/healthz after the fd shortage")
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait(timeout=10)


async def test_idle_and_slow_connections_are_closed_before_their_headers():
    table = http.routes(metrics=Metrics(), health=Health())
    async with anyio.create_task_group() as tg:
        port = await tg.start(http.serve, "127.0.0.1:0", table)
        idle = await anyio.connect_tcp("127.0.0.1", port)
        slow = await anyio.connect_tcp("127.0.0.1", port)
        started = anyio.current_time()

        async def closed(stream: anyio.abc.SocketStream, trickle: bool) -> bool:
            # The slow one keeps sending a header line now and then, never the blank line.
            with anyio.move_on_after(0.1):
                try:
                    if trickle:
                        await stream.send(b"X-Slow: 1\r\n")
                    return not await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    return True
            return False

        await slow.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        await eventually_async(lambda: closed(idle, False), deadline=5, what="the idle one closed")
        await eventually_async(lambda: closed(slow, True), deadline=5, what="the slow one closed")
        assert anyio.current_time() - started < http.HEADER_DEADLINE + 1.0
        status, _, _ = await fetch(port, get("/healthz"))
        assert status == 200
        tg.cancel_scope.cancel()


async def test_reviews_are_remembered_briefly_and_boundedly():
    from syncagent.runtime import metricsauth

    calls: list[str] = []
    now = [0.0]

    async def post(resource: Resource, body: dict) -> dict:
        calls.append(resource.plural)
        if body["kind"] == "TokenReview":
            ok = body["spec"]["token"].startswith("good")
            return {"status": {"authenticated": ok, "user": {"username": "u"}}}
        return {"status": {"allowed": body["spec"]["nonResourceAttributes"]["path"] == "/metrics"}}

    authorize = metricsauth.ReviewAuthorizer(post, clock=lambda: now[0])
    bearer = {"authorization": "Bearer good-1"}
    assert await authorize("/metrics", bearer) is None
    assert await authorize("/metrics", bearer) is None
    assert calls == ["tokenreviews", "subjectaccessreviews"]  # the second one remembered
    assert (await authorize("/readyz", bearer)).status == 403
    assert (await authorize("/metrics", {"authorization": "Bearer bad"})).status == 401
    assert (await authorize("/metrics", {})).status == 401
    now[0] += metricsauth.ALLOWED_TTL + 1
    calls.clear()
    assert await authorize("/metrics", bearer) is None
    assert calls == ["tokenreviews", "subjectaccessreviews"]  # reviewed again once stale
    # Made-up tokens are reviewed each time, remembered never: the real scraper's grant stays.
    for i in range(metricsauth.MAX_REMEMBERED * 2):
        await authorize("/metrics", {"authorization": f"Bearer bad-{i}"})
    assert len(authorize._remembered) == 1
    calls.clear()
    assert await authorize("/metrics", bearer) is None
    assert calls == []


async def test_reviews_of_unremembered_tokens_run_a_few_at_a_time():
    from syncagent.runtime import metricsauth

    in_flight, most = [0], [0]
    release = anyio.Event()

    async def post(resource: Resource, body: dict) -> dict:
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        await release.wait()
        in_flight[0] -= 1
        return {"status": {"authenticated": False}}

    authorize = metricsauth.ReviewAuthorizer(post)
    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(authorize, "/metrics", {"authorization": f"Bearer made-up-{i}"})
        await eventually_async(
            lambda: in_flight[0] >= metricsauth.REVIEWS_AT_ONCE,
            deadline=5,
            what="the first reviews to start",
        )
        release.set()
    assert most[0] == metricsauth.REVIEWS_AT_ONCE
