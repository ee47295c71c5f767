"""A tiny HTTP/1.1 server on anyio TCP for ``/metrics``, ``/healthz``, ``/readyz`` and the
ownership history (``/history``, a route that reads its query: :class:`WithQuery`).

One request per connection (``Connection: close``), GET and HEAD only: Prometheus and the
kubelet's probes need nothing more, and it keeps the agent free of a web framework.

It cannot be knocked over from outside: at most ``max_connections`` are served at once (one
more is closed at once, without a task), a request line and headers must arrive within
``READ_TIMEOUT``, and an accept that fails (``EMFILE``: out of file descriptors) is logged and
retried after a pause instead of ending the server, and with it the agent. Optionally over TLS
(``tls``) and behind an ``authorize`` hook (``runtime/metricsauth.py``).
"""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl

import anyio
import anyio.abc
from anyio.abc import SocketAttribute
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.tls import TLSStream

from syncagent.runtime.health import Health
from syncagent.runtime.metrics import CONTENT_TYPE, Metrics

log = logging.getLogger(__name__)

MAX_HEADER = 16 * 1024
READ_TIMEOUT = 10.0
MAX_CONNECTIONS = 64
ACCEPT_PAUSE = 0.5  # after a failed accept: the descriptors a closing connection frees
TEXT = "text/plain; charset=utf-8"
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


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
    max_connections: int = MAX_CONNECTIONS


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


def render_response(response: Response, *, head: bool = False) -> bytes:
    body = response.body.encode()
    reason = REASONS.get(response.status, "")
    headers = (
        f"HTTP/1.1 {response.status} {reason}\r\n"
        f"Content-Type: {response.content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return headers.encode() + (b"" if head else body)


def dispatch(request_line: str, table: dict[str, Route]) -> tuple[Response, bool]:
    """The response to one request line, and whether it was a HEAD request."""
    parts = request_line.split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return Response(400, "bad request\n"), False
    method, target, _ = parts
    if method not in ("GET", "HEAD"):
        return Response(405, "only GET and HEAD\n"), False
    path, _, query = target.partition("?")
    route = table.get(path)
    if route is None:
        return Response(404, f"not found; try {', '.join(sorted(table))}\n"), method == "HEAD"
    if isinstance(route, WithQuery):
        return route.handle(dict(parse_qsl(query))), method == "HEAD"
    return route(), method == "HEAD"


def _headers(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return lines[0], headers


async def _respond(server: Server, request_line: str, headers: dict[str, str]) -> bytes:
    try:
        response, is_head = dispatch(request_line, server.table)
        if server.authorize is not None and response.status != 400:
            target = request_line.split()[1].split("?", 1)[0]
            refused = await server.authorize(target, headers)
            if refused is not None:
                response = refused
    except Exception:
        log.exception("http handler failed", extra={"request": request_line})
        response, is_head = Response(500, "internal error\n"), False
    return render_response(response, head=is_head)


async def _handle(stream: anyio.abc.ByteStream, server: Server) -> None:
    async with stream:
        try:
            with anyio.fail_after(READ_TIMEOUT):
                if server.tls is not None:
                    stream = await TLSStream.wrap(stream, server_side=True, ssl_context=server.tls)
                buffered = BufferedByteReceiveStream(stream)
                head = await buffered.receive_until(b"\r\n\r\n", MAX_HEADER)
        except (
            TimeoutError,
            OSError,
            ssl.SSLError,
            anyio.BrokenResourceError,
            anyio.IncompleteRead,
            anyio.DelimiterNotFound,
            anyio.EndOfStream,
        ):
            return
        request_line, headers = _headers(head)
        data = await _respond(server, request_line, headers)
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await stream.send(data)


async def _accept_loop(listeners: list[anyio.abc.SocketListener], server: Server) -> None:
    active = 0

    async def handle(stream: anyio.abc.SocketStream) -> None:
        nonlocal active
        try:
            await _handle(stream, server)
        finally:
            active -= 1

    async def accept(listener: anyio.abc.SocketListener, tg: anyio.abc.TaskGroup) -> None:
        nonlocal active
        while True:
            try:
                stream = await listener.accept()
            except OSError as err:
                log.warning(
                    f"{server.what}: accepting a connection failed; retrying",
                    extra={"error": str(err), "errno": err.errno, "retry_in": ACCEPT_PAUSE},
                )
                await anyio.sleep(ACCEPT_PAUSE)
                continue
            if active >= server.max_connections:
                await stream.aclose()  # over the cap: no task, no read, no answer
                continue
            active += 1
            tg.start_soon(handle, stream)

    async with anyio.create_task_group() as tg:
        for listener in listeners:
            tg.start_soon(accept, listener, tg)


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
    host, port = parse_address(server.address)
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port, reuse_port=False)
    async with listener:
        bound = listener.extra(SocketAttribute.local_port)
        scheme = "https" if server.tls is not None else "http"
        log.info(f"serving {server.what}", extra={"address": f"{host}:{bound}", "scheme": scheme})
        task_status.started(bound)
        await _accept_loop(list(listener.listeners), server)
