"""Faults of single API requests between the agent and a real API server (no tests here).

:class:`HttpFaultProxy` serves plain HTTP on loopback and forwards every request to a control
plane's API server over TLS as its admin (the agent's kubeconfig from :meth:`kubeconfig` points
here, without credentials). Watches and other long responses are streamed through as they come.
A test adds rules by method and path: :meth:`fail` answers matching requests with an error
Status instead of forwarding them; :meth:`hold` keeps matching requests, and any matching
response already streaming, waiting without an answer until :meth:`release` (a stale informer:
it sees nothing of what happens to those resources). :meth:`delay_answer` forwards the first
matching request at once (the server acts on it) but keeps its answer back for a while, then
optionally holds every later request to a path (a Lease renewal stored at once but confirmed
late, after which the leader is cut off from its Lease). Every request is journalled in
:attr:`requests` with the monotonic time it arrived. :class:`~tests.support.faults.FaultProxy`
cuts whole connections; this one picks requests, which TLS passthrough cannot see. :meth:`~HttpFaultProxy.close` shuts
down the agent's connections and the upstream responses being relayed, which wakes the threads
serving them (they close their own sockets), and waits for every thread.
"""

from __future__ import annotations

import contextlib
import re
import socket
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import orjson
import yaml

from syncagent.devcluster import ControlPlane
from tests.support.faults import reset
from tests.support.threads import Threads

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "host",
    "proxy-connection",
    "te",
    "upgrade",
}


@dataclass(frozen=True)
class Rule:
    method: str
    path: re.Pattern[str]  # matched against the path and query, e.g. "/apis/x/v1?watch=true"
    status: int = 0  # 0: hold the request instead of answering

    def matches(self, method: str, target: str) -> bool:
        return method == self.method and self.path.search(target) is not None


@dataclass(frozen=True)
class Delay:
    """Forward one matching request, answer it ``seconds`` later (or at :meth:`release`), then
    hold every request whose method matches ``then_hold_methods`` and path ``then_hold``."""

    rule: Rule
    seconds: float
    then_hold: str | None = None
    then_hold_methods: tuple[str, ...] = ("GET", "PUT", "POST")


@dataclass(frozen=True)
class Arrival:
    at: float  # time.monotonic() when the proxy read the request
    method: str
    target: str


class HttpFaultProxy:
    """Use as a context manager; :meth:`close` releases everything held and stops serving."""

    def __init__(self, plane: ControlPlane) -> None:
        assert plane.pki is not None
        self._tls = ssl.create_default_context(cafile=str(plane.pki.ca_cert))
        self._tls.load_cert_chain(str(plane.pki.admin_cert), str(plane.pki.admin_key))
        self.upstream = plane.server
        self._rules: list[Rule] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self.answered: list[str] = []  # "METHOD target -> status" of every faulted request
        self.requests: list[Arrival] = []
        self._delays: list[Delay] = []
        self.delayed: list[Arrival] = []  # the requests whose answers were delayed
        self._conns: set[socket.socket] = set()  # the agent's connections
        self._upstreams: dict[socket.socket, socket.socket] = {}  # conn -> response relayed
        self._closing = False
        self._threads = Threads()
        self._server = _Server(("127.0.0.1", 0), _handler(self), threads=self._threads)
        self._threads.start(self._server.serve_forever)

    def __enter__(self) -> HttpFaultProxy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def kubeconfig(self) -> Path:
        """A kubeconfig for the agent that talks to the server through this proxy."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "proxy", "cluster": {"server": self.url}}],
            "users": [{"name": "proxy", "user": {}}],
            "contexts": [{"name": "proxy", "context": {"cluster": "proxy", "user": "proxy"}}],
            "current-context": "proxy",
        }
        out = Path(tempfile.mkstemp(prefix="kubeconfig-proxy-", suffix=".yaml")[1])
        out.write_text(yaml.safe_dump(config))
        return out

    def fail(self, method: str, path: str, status: int) -> None:
        """Answer ``method`` requests whose path and query match the regex ``path`` with an
        error Status of ``status``."""
        with self._lock:
            self._rules.append(Rule(method, re.compile(path), status))

    def hold(self, method: str, path: str) -> None:
        """Keep matching requests (and matching responses under way) waiting, unanswered."""
        with self._lock:
            self._released.clear()
            self._rules.append(Rule(method, re.compile(path)))

    def delay_answer(
        self, method: str, path: str, seconds: float, *, then_hold: str | None = None
    ) -> None:
        """Forward the next ``method`` request matching ``path`` at once, but send its answer
        ``seconds`` later (``math.inf``: at :meth:`release`); then hold every GET, PUT and POST
        matching ``then_hold`` (as :meth:`hold`) before the answer goes out."""
        with self._lock:
            self._delays.append(Delay(Rule(method, re.compile(path)), seconds, then_hold))

    def release(self) -> None:
        """Drop every rule; held requests are then answered 503, delayed answers sent."""
        with self._lock:
            self._rules.clear()
            self._delays.clear()
        self._released.set()

    def arrived(self, method: str, target: str) -> Arrival:
        arrival = Arrival(time.monotonic(), method, target)
        with self._lock:
            self.requests.append(arrival)
        return arrival

    def take_delay(self, arrival: Arrival) -> Delay | None:
        with self._lock:
            for delay in self._delays:
                if delay.rule.matches(arrival.method, arrival.target):
                    self._delays.remove(delay)
                    self.delayed.append(arrival)
                    return delay
        return None

    def end_delay(self, delay: Delay) -> None:
        """Start ``delay``'s holds, then wait it out (the fault itself)."""
        if delay.then_hold is not None:
            for method in delay.then_hold_methods:
                self.hold(method, delay.then_hold)
        self._released.wait(timeout=None if delay.seconds == float("inf") else delay.seconds)

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        with self._lock:
            self._closing = True
            for conn in self._conns:
                reset(conn)
            for upstream in self._upstreams.values():
                reset(upstream)
        self._threads.join_all(f"HttpFaultProxy at {self.url}")
        self._server.server_close()

    def serving(self, conn: socket.socket, *, upstream: socket.socket | None = None) -> None:
        """Note a connection (and the upstream socket relayed on it) that close() must wake."""
        with self._lock:
            self._conns.add(conn)
            if upstream is not None:
                self._upstreams[conn] = upstream
            if self._closing:  # close() has swept already: wake this one now
                reset(conn)
                if upstream is not None:
                    reset(upstream)

    def served(self, conn: socket.socket, *, upstream_only: bool = False) -> None:
        """Forget what :meth:`serving` noted; its thread may close it now."""
        with self._lock:
            self._upstreams.pop(conn, None)
            if not upstream_only:
                self._conns.discard(conn)

    def rule_for(self, method: str, target: str) -> Rule | None:
        with self._lock:
            return next((r for r in self._rules if r.matches(method, target)), None)

    def wait_released(self) -> None:
        self._released.wait()

    def upstream_client(self) -> httpx2.Client:
        timeout = httpx2.Timeout(connect=5.0, read=None, write=30.0, pool=5.0)
        return httpx2.Client(base_url=self.upstream, verify=self._tls, timeout=timeout)


class _Server(ThreadingHTTPServer):
    """Serves each connection on a thread of ``threads`` (which close() waits for)."""

    daemon_threads = True
    block_on_close = False  # close() wakes and joins them itself, with a deadline

    def __init__(self, address: tuple[str, int], handler: Any, *, threads: Threads) -> None:
        super().__init__(address, handler)
        self.threads = threads

    def process_request(self, request: Any, client_address: Any) -> None:
        self.threads.start(self.process_request_thread, request, client_address)


def _handler(proxy: HttpFaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, and chunked streaming of watches

        def setup(self) -> None:
            super().setup()
            self.upstream = proxy.upstream_client()
            proxy.serving(self.connection)

        def finish(self) -> None:
            proxy.served(self.connection)
            self.upstream.close()
            super().finish()

        def handle(self) -> None:
            with contextlib.suppress(OSError):  # the agent hung up: nothing to answer
                super().handle()

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._forward()

        do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            arrival = proxy.arrived(self.command, self.path)
            rule = proxy.rule_for(self.command, self.path)
            if rule is not None:
                self._fault(rule)
                return
            delay = proxy.take_delay(arrival)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            try:
                with self.upstream.stream(
                    self.command, self.path, headers=headers, content=body
                ) as resp:
                    proxy.serving(self.connection, upstream=_socket_of(resp))
                    try:
                        self._answer(resp, delay)
                    finally:  # before the response closes its socket
                        proxy.served(self.connection, upstream_only=True)
            except (OSError, httpx2.HTTPError):
                self.close_connection = True

        def _answer(self, resp: httpx2.Response, delay: Delay | None) -> None:
            if delay is None:
                self._stream(resp)
                return
            resp.read()  # the server has acted; only its answer waits
            proxy.end_delay(delay)
            self._send_whole(resp)

        def _stream(self, resp: httpx2.Response) -> None:
            self.send_response(resp.status_code)
            for key, value in resp.headers.multi_items():
                if key.lower() not in _HOP_BY_HOP:
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in resp.iter_raw():
                if proxy.rule_for(self.command, self.path) is not None:
                    # A stream the test now holds: nothing more reaches the agent.
                    proxy.wait_released()
                    self.close_connection = True
                    return
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            if proxy.rule_for(self.command, self.path) is not None:
                proxy.wait_released()  # not even the end of a held stream
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")

        def _send_whole(self, resp: httpx2.Response) -> None:
            self.send_response(resp.status_code)
            for key, value in resp.headers.multi_items():
                if key.lower() not in _HOP_BY_HOP | {"content-encoding"}:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(resp.content)))
            self.end_headers()
            self.wfile.write(resp.content)

        def _fault(self, rule: Rule) -> None:
            status = rule.status
            if not status:
                proxy.wait_released()
                status = 503
            proxy.answered.append(f"{self.command} {self.path} -> {status}")
            body = orjson.dumps(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "message": f"injected by the test's fault proxy: HTTP {status}",
                    "reason": "ServiceUnavailable" if status == 503 else "InternalError",
                    "code": status,
                }
            )
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _socket_of(resp: httpx2.Response) -> socket.socket | None:
    stream = resp.extensions.get("network_stream")
    return stream.get_extra_info("socket") if stream is not None else None
