"""A tiny HTTP/1.1 server on anyio TCP for ``/metrics``, ``/healthz`` and ``/readyz``.

One request per connection (``Connection: close``), GET and HEAD only: Prometheus and the
kubelet's probes need nothing more, and it keeps the agent free of a web framework.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

import anyio
import anyio.abc
from anyio.abc import SocketAttribute
from anyio.streams.buffered import BufferedByteReceiveStream

from syncagent.runtime.health import Health
from syncagent.runtime.metrics import CONTENT_TYPE, Metrics

log = logging.getLogger(__name__)

MAX_HEADER = 16 * 1024
READ_TIMEOUT = 10.0
TEXT = "text/plain; charset=utf-8"
REASONS = {
    200: "OK",
    400: "Bad Request",
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


Route = Callable[[], Response]


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
    route = table.get(target.split("?", 1)[0])
    if route is None:
        return Response(404, f"not found; try {', '.join(sorted(table))}\n"), method == "HEAD"
    return route(), method == "HEAD"


async def _handle(stream: anyio.abc.ByteStream, table: dict[str, Route]) -> None:
    async with stream:
        buffered = BufferedByteReceiveStream(stream)
        try:
            with anyio.fail_after(READ_TIMEOUT):
                head = await buffered.receive_until(b"\r\n\r\n", MAX_HEADER)
        except (TimeoutError, anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.EndOfStream):
            return
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        try:
            response, is_head = dispatch(request_line, table)
        except Exception:
            log.exception("http handler failed", extra={"request": request_line})
            response, is_head = Response(500, "internal error\n"), False
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.send(render_response(response, head=is_head))


async def serve(
    address: str,
    table: dict[str, Route],
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve until cancelled; ``task_status.started(port)`` reports the bound port (for ``:0``)."""
    host, port = parse_address(address)
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port, reuse_port=False)
    async with listener:
        bound = listener.extra(SocketAttribute.local_port)
        log.info("serving metrics and probes", extra={"address": f"{host}:{bound}"})
        task_status.started(bound)
        await listener.serve(lambda stream: _handle(stream, table))
