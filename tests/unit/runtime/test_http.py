import anyio
import pytest

from syncagent.runtime import http
from syncagent.runtime.health import Health
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.queue import QueueMetrics
from tests.support.rawhttp import fetch, get

pytestmark = pytest.mark.anyio


async def test_serves_metrics_and_probes():
    metrics = Metrics()
    metrics.of(QueueMetrics).queue_depth.set(7, queue="dgd")
    health = Health()
    ready = {"caches": False}
    health.add_readiness("caches", lambda: ready["caches"])
    async with anyio.create_task_group() as tg:
        port = await tg.start(
            http.serve, "127.0.0.1:0", http.routes(metrics=metrics, health=health)
        )
        status, headers, body = await fetch(port, get("/metrics"))
        assert status == 200
        assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert 'syncagent_workqueue_depth{queue="dgd"} 7' in body
        assert int(headers["Content-Length"]) == len(body.encode())

        status, _, body = await fetch(port, get("/healthz"))
        assert (status, body.strip()) == (200, "ok")

        status, _, body = await fetch(port, get("/readyz"))
        assert status == 503
        assert "[-]caches" in body
        ready["caches"] = True
        status, _, body = await fetch(port, get("/readyz?verbose=1"))
        assert status == 200
        assert "[+]caches" in body

        status, _, _ = await fetch(port, get("/nope"))
        assert status == 404
        status, _, _ = await fetch(port, b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 405
        status, headers, body = await fetch(port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (status, body) == (200, "")
        assert headers["Content-Length"] == "3"
        status, _, _ = await fetch(port, b"garbage\r\n\r\n")
        assert status == 400
        tg.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("address", "expected"),
    [(":8080", ("0.0.0.0", 8080)), ("127.0.0.1:0", ("127.0.0.1", 0)), ("[::1]:9", ("::1", 9))],
)
def test_parse_address(address, expected):
    assert http.parse_address(address) == expected


@pytest.mark.parametrize("address", ["8080", "host:", "host:http", ":70000"])
def test_parse_address_rejects(address):
    with pytest.raises(ValueError, match="HOST:PORT"):
        http.parse_address(address)


def test_failing_check_counts_as_not_ready():
    health = Health()
    health.add_readiness("a", lambda: True)
    health.add_readiness("b", lambda: 1 / 0)
    ok, text = health.ready()
    assert not ok
    assert "[+]a" in text
    assert "failed: b" in text


def test_a_check_names_what_fails_and_an_empty_text_passes():
    health = Health()
    health.add_readiness("caches", lambda: "v1 secrets in b not synced")
    health.add_readiness("discovery", lambda: "")
    ok, text = health.ready()
    assert not ok
    assert "[-]caches: v1 secrets in b not synced" in text
    assert "[+]discovery" in text
    assert text.endswith("failed: caches\n")


async def test_a_refused_request_never_reaches_a_route():
    served: list[str] = []

    def route() -> http.Response:
        served.append("metrics")
        return http.Response(200, "secret\n")

    async def authorize(path: str, headers: dict[str, str]) -> http.Response | None:
        if headers.get("authorization") == "Bearer good":
            return None
        return http.Response(401, f"Unauthorized: {path}\n")

    server = http.Server("127.0.0.1:0", {"/metrics": route}, authorize=authorize)
    async with anyio.create_task_group() as tg:
        port = await tg.start(http.serve_endpoint, server)
        for path in ("/metrics", "/nope"):
            status, _, body = await fetch(port, get(path))
            assert (status, body) == (401, f"Unauthorized: {path}\n")
        assert served == []
        good = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\n\r\n"
        status, _, body = await fetch(port, good)
        assert (status, body, served) == (200, "secret\n", ["metrics"])
        tg.cancel_scope.cancel()
