"""The API server faked at the HTTP level, for tests without a server (no tests here).

httpx2's ``MockTransport`` in front of :class:`FakeApi`: every request is recorded, then answered
by what the test says (``answer=``, or a subclass overriding :meth:`FakeApi.answer` for a
scenario with state). :meth:`FakeApi.http` is a plain client at :data:`BASE`,
:meth:`FakeApi.client` the agent's own client (``http_for``) on this transport.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

import httpx2
from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import Cluster, Context, User

from syncagent.runtime.client import http_for

BASE = "https://api.test"

Reply = httpx2.Response | Awaitable[httpx2.Response]


def offline_config(server: str = BASE) -> SingleConfig:
    """A lightkube client config for a server that does not exist."""
    return SingleConfig(
        context_name="t",
        context=Context(cluster="t", user="u"),
        cluster=Cluster(server=server),
        user=User(),
    )


class FakeApi:
    def __init__(self, answer: Callable[[httpx2.Request], Reply] | None = None) -> None:
        self.requests: list[httpx2.Request] = []
        self._answer = answer

    def answer(self, request: httpx2.Request) -> Reply:
        if self._answer is None:
            raise NotImplementedError("FakeApi: pass answer= or override answer()")
        return self._answer(request)

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.answer(request)
        return await reply if inspect.isawaitable(reply) else reply

    @property
    def methods(self) -> list[str]:
        return [r.method for r in self.requests]

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def http(self, *, base_url: str = BASE) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(base_url=base_url, transport=self.transport())

    def client(self, *, timeout: float = 5.0) -> httpx2.AsyncClient:
        return http_for(
            offline_config(), timeout=httpx2.Timeout(timeout), transport=self.transport()
        )
