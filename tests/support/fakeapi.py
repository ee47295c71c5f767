"""The API server faked at the HTTP level, for tests without a server (no tests here).

A thin helper over httpx2-pytest's ``httpx2_mock`` fixture, which patches httpx2's own
transports: :class:`FakeApi` registers a reusable callback that records every request and
answers it as the test says (``answer=``, or a subclass overriding :meth:`FakeApi.answer` for a
scenario with state). Clients keep their real transports: :meth:`FakeApi.http` is a plain
client at :data:`BASE`, :meth:`FakeApi.client` the agent's own client (``http_for``); each
answers only requests under its base URL, so two fakes at two bases serve one test.

The callback goes on ``mock=`` if given, else on the current test's ``httpx2_mock`` (requested
on first use through :func:`current_test`, which ``tests/unit/conftest.py`` installs), so a test
need not name the fixture. Its teardown then fails the test if the fake was never asked.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator

import httpx2
import pytest
from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import Cluster, Context, User
from pytest_httpx2 import HTTPXMock

from syncagent.runtime.client import http_for

BASE = "https://api.test"

Reply = httpx2.Response | Awaitable[httpx2.Response]

_current: list[pytest.FixtureRequest] = []


def offline_config(server: str = BASE) -> SingleConfig:
    """A lightkube client config for a server that does not exist."""
    return SingleConfig(
        context_name="t",
        context=Context(cluster="t", user="u"),
        cluster=Cluster(server=server),
        user=User(),
    )


@pytest.fixture(autouse=True)
def current_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """Remember the running test, so a :class:`FakeApi` can ask for its ``httpx2_mock``
    only when one is built (tests on real sockets must not have httpx2 patched)."""
    _current.append(request)
    try:
        yield
    finally:
        _current.remove(request)


def _test_mock() -> HTTPXMock:
    if not _current:
        raise RuntimeError("FakeApi outside a test: pass mock=httpx2_mock")
    mock = _current[-1].getfixturevalue("httpx2_mock")
    assert isinstance(mock, HTTPXMock)
    return mock


class FakeApi:
    def __init__(
        self,
        answer: Callable[[httpx2.Request], Reply] | None = None,
        *,
        mock: HTTPXMock | None = None,
    ) -> None:
        self.requests: list[httpx2.Request] = []
        self._answer = answer
        self._mock = mock
        self._bases: set[str | None] = set()

    def answer(self, request: httpx2.Request) -> Reply:
        if self._answer is None:
            raise NotImplementedError("FakeApi: pass answer= or override answer()")
        return self._answer(request)

    def handle(self, request: httpx2.Request) -> Reply:
        """Record ``request`` and answer it: ``httpx2_mock`` awaits an awaitable answer (an async
        client's), so a synchronous one serves sync clients too (lightkube's ``Client``)."""
        self.requests.append(request)
        return self.answer(request)

    @property
    def methods(self) -> list[str]:
        return [r.method for r in self.requests]

    def register(self, *, base: str | None = None) -> None:
        """Answer every request httpx2 sends from now on under ``base`` (None: to anywhere),
        so fakes at different bases answer side by side. Once per base and fake."""
        if base not in self._bases:
            mock = self._mock or _test_mock()
            url = None if base is None else re.compile(re.escape(base.rstrip("/")) + "(/|$)")
            mock.add_callback(self.handle, url=url, is_reusable=True)
            self._bases.add(base)

    def transport(self) -> httpx2.AsyncHTTPTransport:
        """A real transport (for wrapping, e.g. in retries); the fake answers every request
        sent while it is registered, wherever it goes."""
        self.register()
        return httpx2.AsyncHTTPTransport()

    def http(self, *, base_url: str = BASE) -> httpx2.AsyncClient:
        self.register(base=base_url)
        return httpx2.AsyncClient(base_url=base_url)

    def client(self, *, timeout: float = 5.0) -> httpx2.AsyncClient:
        self.register(base=BASE)
        return http_for(offline_config(), timeout=httpx2.Timeout(timeout))
