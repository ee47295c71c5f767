"""The EndpointSlice recorder of the e2e and chaos tiers cannot pass having listened to nothing.

A tiny API server on loopback lists one ready endpoint behind a Service, then answers the
recorder's watch badly. Before, each of these runs read as "no gap": no violation, and the
recorder's thread gone without a word (a 410 ``Status`` body raised ``KeyError: 'object'``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
import pytest
from lightkube import Client

from tests.e2e.support.observe import SERVICE_NAME_LABEL, EndpointRecorder
from tests.support.fakeapi import offline_config
from tests.support.kube import Kube

NS, SERVICE = "ns", "svc"
SLICES = f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices"
LISTING = {
    "kind": "EndpointSliceList",
    "metadata": {"resourceVersion": "10"},
    "items": [
        {
            "metadata": {
                "name": "svc-abc",
                "resourceVersion": "9",
                "labels": {SERVICE_NAME_LABEL: SERVICE},
            },
            "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": True}}],
        }
    ],
}
GONE = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": "too old resource version: 10 (20)",
    "reason": "Expired",
    "code": 410,
}

Watch = Callable[[BaseHTTPRequestHandler], None]


def _serve(watch: Watch) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if "watch=" in self.path:
                watch(self)
            else:
                _answer(self, 200, orjson.dumps(LISTING))

        def log_message(self, *args: object) -> None:
            pass

    return Handler


def _answer(handler: BaseHTTPRequestHandler, code: int, body: bytes) -> None:
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def api() -> Iterator[Callable[[Watch], Kube]]:
    servers: list[ThreadingHTTPServer] = []

    def start(watch: Watch) -> Kube:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _serve(watch))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return Kube(Client(config=offline_config(f"http://127.0.0.1:{server.server_address[1]}")))

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _record(kube: Kube) -> EndpointRecorder:
    with EndpointRecorder(kube, NS, [SERVICE]) as recorder:
        # The recorder's thread ends on its own once it failed; wait for that, not for time.
        recorder._thread.join(timeout=30)  # type: ignore[union-attr]
    return recorder


def _event_then_error(handler: BaseHTTPRequestHandler) -> None:
    _answer(handler, 200, orjson.dumps({"type": "ERROR", "object": GONE}) + b"\n")


def _malformed(handler: BaseHTTPRequestHandler) -> None:
    _answer(handler, 200, b'{"type": "MODIFIED"}\n')


@pytest.mark.parametrize(
    ("watch", "why"),
    [
        (lambda h: _answer(h, 410, orjson.dumps(GONE)), "watch answered HTTP 410"),
        (lambda h: _answer(h, 403, orjson.dumps({**GONE, "code": 403})), "HTTP 403"),
        (_event_then_error, "watch ERROR event"),
        (_malformed, "KeyError"),
    ],
    ids=["http-410", "http-403", "error-event", "malformed-event"],
)
def test_a_recorder_that_stopped_listening_says_so(api, watch: Watch, why: str) -> None:
    recorder = _record(api(watch))
    # What the old check read: no violation, so "served throughout".
    assert recorder.violations == []
    assert any(why in f for f in recorder.failures), recorder.failures
    with pytest.raises(AssertionError, match="stopped listening"):
        recorder.assert_served_throughout()


def test_a_recorder_that_saw_no_change_proves_nothing(api) -> None:
    stop = threading.Event()

    def quiet(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        stop.wait(0.5)  # a watch that delivers nothing before its server ends it

    kube = api(quiet)
    with EndpointRecorder(kube, NS, [SERVICE]) as recorder:
        pass
    assert recorder.failures == []
    assert recorder.violations == []
    assert recorder.proof_problems() == ["the EndpointSlice recorder saw no EndpointSlice change"]
