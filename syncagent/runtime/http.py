"""The agent's HTTP endpoints (``/metrics``, ``/healthz``, ``/readyz``, the ownership history):
each a small ASGI app over a route table, served by hypercorn on its own port.

hypercorn (not a hand-written server) speaks HTTP/1.1 and TLS. The rule that keeps the probes
answered under a flood of idle or slow connections is its idle timer: a connection that has
not sent a whole request's headers within ``HEADER_DEADLINE`` (counted from the accept, or from
the previous response; a TLS handshake has as long) is closed. There is no connection cap: a
cap is what let 64 idle connections lock the kubelet out. Every response closes its connection
(``Connection: close``): Prometheus and the kubelet open one per request anyway.

An ``authorize`` hook (``runtime/metricsauth.py``) wraps the app (:func:`guarded`), so a request
it refuses never reaches a route: any app can be put behind an authenticating layer this way.
"""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import anyio
import anyio.abc
from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config

from syncagent.runtime.health import Health
from syncagent.runtime.metrics import CONTENT_TYPE, Metrics

log = logging.getLogger(__name__)

MAX_HEADER = 16 * 1024
# Idle and slow connections are gone within this; a local scraper or kubelet needs milliseconds.
HEADER_DEADLINE = 1.5
# How long a stopping server waits for requests in flight.
GRACE = 1.0
TEXT = "text/plain; charset=utf-8"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Response:
    status: int
    body: str
    content_type: str = TEXT


@dataclass(frozen=True)
class WithQuery:
    """A route given the request's query parameters (the last value of a repeated one)."""

    handle: Callable[[Mapping[str, str]], Response]


Route = Callable[[], Response] | WithQuery
# Given the request's path and headers: None to serve it, or the refusal to send instead.
Authorize = Callable[[str, dict[str, str]], Awaitable["Response | None"]]


@dataclass(frozen=True)
class Server:
    """How one endpoint serves: where, what, and its protections."""

    address: str
    table: dict[str, Route]
    what: str = "metrics and probes"
    tls: ssl.SSLContext | None = None
    authorize: Authorize | None = None
    app: App | None = None  # serves instead of ``table`` (an endpoint with routes of its own)


def parse_address(address: str) -> tuple[str, int]:
    """``:8080`` / ``0.0.0.0:8080`` / ``[::1]:8080`` -> (host, port); empty host = all."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"address {address!r}: expected HOST:PORT, e.g. :8080 or 127.0.0.1:8080")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


def routes(*, metrics: Metrics, health: Health) -> dict[str, Route]:
    def metrics_route() -> Response:
        return Response(200, metrics.render(), CONTENT_TYPE)

    def probe(check: Callable[[], tuple[bool, str]]) -> Route:
        def route() -> Response:
            ok, text = check()
            return Response(200 if ok else 503, text)

        return route

    return {
        "/metrics": metrics_route,
        "/healthz": probe(health.live),
        "/readyz": probe(health.ready),
    }


def answer(method: str, target: str, table: dict[str, Route]) -> Response:
    """The response of ``table`` to one request."""
    if method not in ("GET", "HEAD"):
        return Response(405, "only GET and HEAD\n")
    path, _, query = target.partition("?")
    route = table.get(path)
    if route is None:
        return Response(404, f"not found; try {', '.join(sorted(table))}\n")
    if isinstance(route, WithQuery):
        return route.handle(dict(parse_qsl(query)))
    return route()


def dispatch(request_line: str, table: dict[str, Route]) -> tuple[Response, bool]:
    """The response to one request line, and whether it was a HEAD request."""
    parts = request_line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return Response(400, "bad request\n"), False
    return answer(parts[0], parts[1], table), parts[0] == "HEAD"


async def send_response(send: Send, response: Response) -> None:
    """``response`` over ASGI (hypercorn leaves a HEAD's body out)."""
    body = response.body.encode()
    headers = [
        (b"Content-Type", response.content_type.encode()),
        (b"Content-Length", str(len(body)).encode()),
        (b"Connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def app(table: dict[str, Route]) -> App:
    """The ASGI app serving ``table``."""

    async def serve_table(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        target = scope["path"] + (
            "?" + scope["query_string"].decode() if scope["query_string"] else ""
        )
        try:
            response = answer(scope["method"], target, table)
        except Exception:
            log.exception("http handler failed", extra={"method": scope["method"], "path": target})
            response = Response(500, "internal error\n")
        await send_response(send, response)

    return serve_table


def guarded(inner: App, authorize: Authorize) -> App:
    """``inner`` behind ``authorize``: a refused request gets the refusal, and ``inner`` never
    sees it (no route is looked up or rendered for it)."""

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        headers = {
            name.decode("latin-1").lower(): v.decode("latin-1") for name, v in scope["headers"]
        }
        refused = await authorize(scope["path"], headers)
        if refused is not None:
            await send_response(send, refused)
            return
        await inner(scope, receive, send)

    return guard


class _Config(Config):
    """hypercorn's settings, with a TLS context of ours (one a certificate reload updates)."""

    def __init__(self, tls: ssl.SSLContext | None) -> None:
        super().__init__()
        self._tls = tls

    @property
    def ssl_enabled(self) -> bool:
        return self._tls is not None

    def create_ssl_context(self) -> ssl.SSLContext | None:
        return self._tls


def config(server: Server, sock: socket.socket) -> Config:
    """hypercorn's settings for ``server`` listening on ``sock`` (which hypercorn then owns)."""
    settings = _Config(server.tls)
    settings.bind = [f"fd://{sock.detach()}"]  # https with a TLS context, else http
    settings.keep_alive_timeout = HEADER_DEADLINE
    settings.ssl_handshake_timeout = HEADER_DEADLINE
    settings.h11_max_incomplete_size = MAX_HEADER
    settings.graceful_timeout = GRACE
    settings.backlog = 1024
    # Its error log into ours (JSON lines), not its own stderr format; no access log.
    settings.errorlog = logging.getLogger(f"{__name__}.server")
    settings.accesslog = None
    return settings


def listen(address: str) -> socket.socket:
    """A listening TCP socket at ``address`` (OSError when it cannot be had)."""
    host, port = parse_address(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock


async def serve(
    address: str,
    table: dict[str, Route],
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``table`` over plain HTTP at ``address`` (see :func:`serve_endpoint`)."""
    await serve_endpoint(Server(address, table), task_status=task_status)


async def serve_endpoint(
    server: Server, *, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Serve until cancelled; ``task_status.started(port)`` reports the bound port (for ``:0``)."""
    sock = listen(server.address)
    host, bound = sock.getsockname()[:2]
    served = server.app or app(server.table)
    if server.authorize is not None:
        served = guarded(served, server.authorize)
    stop = anyio.Event()

    async def run() -> None:
        # Shielded: a cancel of the endpoint sets `stop`, so hypercorn closes its listener and
        # waits out GRACE for requests in flight instead of being torn down mid-response.
        with anyio.CancelScope(shield=True):
            await hypercorn_serve(served, config(server, sock), shutdown_trigger=stop.wait)

    scheme = "https" if server.tls is not None else "http"
    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        log.info(f"serving {server.what}", extra={"address": f"{host}:{bound}", "scheme": scheme})
        task_status.started(bound)
        try:
            await anyio.sleep_forever()
        finally:
            stop.set()
