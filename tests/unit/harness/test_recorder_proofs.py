"""The EndpointSlice recorder of the e2e and chaos tiers cannot pass having listened to nothing.

The API server (``httpx2_mock``) lists one ready endpoint behind a Service, then answers the
recorder's watch badly. Before, each of these runs read as "no gap": no violation, and the
recorder's thread gone without a word (a 410 ``Status`` body raised ``KeyError: 'object'``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx2
import orjson
import pytest
from lightkube import Client
from pytest_httpx2 import HTTPXMock

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

Watch = Callable[[httpx2.Request], httpx2.Response]


def _answer(code: int, body: bytes) -> httpx2.Response:
    return httpx2.Response(code, content=body, headers={"Content-Type": "application/json"})


@pytest.fixture
def api(httpx2_mock: HTTPXMock) -> Callable[[Watch], Kube]:
    """A Kube whose API server lists :data:`LISTING` and answers each watch with ``watch``
    (the recorder's own lightkube client, its transport real, answered by ``httpx2_mock``)."""

    def start(watch: Watch) -> Kube:
        def serve(request: httpx2.Request) -> httpx2.Response:
            if "watch" in request.url.params:
                return watch(request)
            return _answer(200, orjson.dumps(LISTING))

        httpx2_mock.add_callback(serve, is_reusable=True)
        return Kube(Client(config=offline_config()))

    return start


def _record(kube: Kube) -> EndpointRecorder:
    with EndpointRecorder(kube, NS, [SERVICE]) as recorder:
        # The recorder's thread ends on its own once it failed; wait for that, not for time.
        recorder._thread.join(timeout=30)  # type: ignore[union-attr]
    return recorder


def _event_then_error(request: httpx2.Request) -> httpx2.Response:
    return _answer(200, orjson.dumps({"type": "ERROR", "object": GONE}) + b"\n")


def _malformed(request: httpx2.Request) -> httpx2.Response:
    return _answer(200, b'{"type": "MODIFIED"}\n')


@pytest.mark.parametrize(
    ("watch", "why"),
    [
        (lambda r: _answer(410, orjson.dumps(GONE)), "watch answered HTTP 410"),
        (lambda r: _answer(403, orjson.dumps({**GONE, "code": 403})), "HTTP 403"),
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

    def quiet(request: httpx2.Request) -> httpx2.Response:
        stop.wait(0.5)  # a watch that delivers nothing before its server ends it
        return _answer(200, b"")

    kube = api(quiet)
    with EndpointRecorder(kube, NS, [SERVICE]) as recorder:
        pass
    assert recorder.failures == []
    assert recorder.violations == []
    assert recorder.proof_problems() == ["the EndpointSlice recorder saw no EndpointSlice change"]
