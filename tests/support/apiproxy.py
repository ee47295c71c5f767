"""An HTTP-level fault proxy between the agent and the real API server (no tests here).

:class:`ApiProxy` terminates TLS with the control plane's own serving certificate (its SANs
name 127.0.0.1, and the agent's kubeconfig already trusts its CA), reads each HTTP/1.1 request,
and forwards it to the API server on a connection of its own under the admin identity the
agent's kubeconfig carries anyway; a request that brings its own bearer token (an agent running
with a ServiceAccount token, the chart's identity) is forwarded with that token and no
certificate, so the API server authorises and audits that identity. Between the two it can:

- answer a fraction of requests badly (:class:`Faults`): 429 with ``Retry-After``, 500, a
  connection reset (before the server saw the request, or after it acted, losing the answer),
  or a stall that outlasts the client's timeout; watches included (a watch reset is cut
  mid-stream);
- record every write (:attr:`writes`) and call ``on_write`` once the server has answered a
  write but before the agent sees the answer (the crash-point sweep kills the agent there);
- cut every open watch stream (:meth:`cut_watches`) and answer watches with the
  ``410 Expired`` ERROR event the API server sends after an etcd compaction
  (:attr:`Faults.gone`);
- hold the watches of one resource (:meth:`hold_watches`): its open watches are cut and its new
  ones wait unanswered until :meth:`release_watches`, so the agent's cache of that kind lags
  while every other watch and request goes on (a watch reconnecting, in slow motion).

A cut or :meth:`ApiProxy.close` only shuts sockets down, the agent's connection and the
upstream response being relayed on it: that wakes the thread serving the connection, which
closes them itself (see :mod:`tests.support.faults`); close() then waits for every thread.

A run that keeps its logs (``$SYNCAGENT_TEST_LOGS``) also journals every request (when it came,
what it asked, the fault, the answer, when it ended) beside the agents' logs.
"""

from __future__ import annotations

import contextlib
import random
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO
from urllib.parse import parse_qs, urlsplit

import httpx2
import orjson

from syncagent.devcluster.controlplane import ControlPlane
from tests.support import testlogs
from tests.support.agent import kubeconfig_via
from tests.support.faults import hard_close, reset
from tests.support.threads import Threads

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "accept-encoding"}
)
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Side effects that are not the agent's state: Events, and Leases (leader election).
NOT_STATE = frozenset({"events", "leases"})
REASONS = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error"}
FAULT_KINDS = ("429", "500", "reset", "timeout")


@dataclass
class Faults:
    """What fraction of requests fail, and how. ``rate`` is split evenly over ``kinds``;
    ``gone`` is the fraction of watches answered with a 410 Expired ERROR event."""

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    gone: float = 0.0
    stall: float = 8.0  # a "timeout" holds the request this long (beyond the client's timeout)
    retry_after: int = 1
    seed: int = 18


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def params(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query)

    @property
    def has_token(self) -> bool:
        """Whether the client authenticates itself (a bearer token the proxy passes on)."""
        return any(k.lower() == "authorization" for k, _ in self.headers)

    @property
    def is_watch(self) -> bool:
        return self.method == "GET" and self.params.get("watch", [""])[0] in ("true", "1")

    @property
    def is_write(self) -> bool:
        """A real (not dry-run) write of the agent's state."""
        return (
            self.method in WRITE_METHODS
            and "dryRun" not in self.params
            and resource_of(self.path) not in NOT_STATE
        )


@dataclass(frozen=True)
class Write:
    """One write as the server answered it: its field manager, what was sent, and the
    server's answer when it refused (a 409 says whether a precondition or a field conflict)."""

    method: str
    path: str
    status: int
    manager: str = ""
    body: bytes = b""
    refusal: bytes = b""

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


@dataclass
class Stats:
    requests: int = 0
    faults: Counter[str] = field(default_factory=Counter)


def resource_of(path: str) -> str:
    parts = [p for p in path.split("/") if p]
    rest = parts[2:] if parts[:1] == ["api"] else parts[3:]
    if len(rest) >= 2 and rest[0] == "namespaces":
        rest = rest[2:]
    return rest[0] if rest else ""


class ApiProxy:
    """Start as a context manager; :attr:`kubeconfig` points a client at the proxy."""

    def __init__(
        self,
        plane: ControlPlane,
        *,
        faults: Faults | None = None,
        on_write: Callable[[int, Write], None] | None = None,
    ) -> None:
        assert plane.pki is not None
        self.plane = plane
        self.faults = faults or Faults()
        self.on_write = on_write
        self.writes: list[Write] = []
        self.stats = Stats()
        self.journal: list[str] = []
        self._journal_file = testlogs.kept_file("proxy")
        self._t0 = time.monotonic()
        self._rng = random.Random(self.faults.seed)
        self._lock = threading.Lock()
        self._watches: dict[socket.socket, str] = {}  # open watch -> its resource
        self._held: dict[str, threading.Event] = {}  # resource -> set when released
        self._waiting: Counter[str] = Counter()  # held watch requests waiting, by resource
        self._conns: set[socket.socket] = set()
        self._upstreams: dict[socket.socket, socket.socket] = {}  # conn -> response relayed
        self._threads = Threads()
        self._closed = threading.Event()
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(str(plane.pki.serving_cert), str(plane.pki.serving_key))
        tls.set_alpn_protocols(["http/1.1"])
        self._tls = tls
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.kubeconfig: Path = kubeconfig_via(plane.kubeconfig, f"https://127.0.0.1:{self.port}")

    def __enter__(self) -> ApiProxy:
        self._threads.start(self._accept)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._closed.set()
        for resource in list(self._held):
            self.release_watches(resource)
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept(); close() would not
        with self._lock:
            for conn in self._conns:
                self._cut(conn)
        self._threads.join_all(f"ApiProxy on port {self.port}")
        self.kubeconfig.unlink(missing_ok=True)
        if self._journal_file is not None:
            with self._lock:
                self._journal_file.write_text("\n".join(self.journal) + "\n")

    def _note(self, request: Request, what: str) -> None:
        if self._journal_file is None:
            return  # the journal is only for a run that keeps its logs
        with self._lock:
            self.journal.append(
                f"{time.monotonic() - self._t0:9.3f} {request.method} {request.target} {what}"
            )

    # -- what a test does -----------------------------------------------------------------

    def cut_watches(self, resource: str | None = None) -> int:
        """Reset every open watch connection (of ``resource``, a plural such as
        ``deployments``, when given); returns how many were cut."""
        with self._lock:
            watches = [c for c, r in self._watches.items() if resource in (None, r)]
            for conn in watches:
                del self._watches[conn]
                self._cut(conn)
        return len(watches)

    def _cut(self, conn: socket.socket) -> None:
        """Reset ``conn`` and the upstream response relayed on it (under the lock: their
        serving thread closes them only once they left ``_conns`` and ``_upstreams``)."""
        reset(conn)
        upstream = self._upstreams.get(conn)
        if upstream is not None:
            reset(upstream)

    def _cut_if_open(self, conn: socket.socket) -> None:
        with self._lock:
            if conn in self._conns:
                self._cut(conn)

    def hold_watches(self, resource: str) -> int:
        """Cut the open watches of ``resource`` and keep its new watch requests waiting,
        unanswered, until :meth:`release_watches`; returns how many were cut."""
        with self._lock:
            self._held.setdefault(resource, threading.Event())
        return self.cut_watches(resource)

    def release_watches(self, resource: str) -> None:
        """Answer the held watch requests of ``resource`` (from their resourceVersion, as the
        server would have) and hold no more."""
        with self._lock:
            released = self._held.pop(resource, None)
        if released is not None:
            released.set()

    def held_watches(self, resource: str) -> int:
        """Watch requests of ``resource`` waiting on the hold now."""
        with self._lock:
            return self._waiting[resource]

    def open_watches(self) -> int:
        with self._lock:
            return len(self._watches)

    # -- serving --------------------------------------------------------------------------

    def _accept(self) -> None:
        try:
            while not self._closed.is_set():
                try:
                    raw, _ = self._listener.accept()
                except OSError:
                    return
                self._threads.start(self._serve, raw)
        finally:
            self._listener.close()

    def _serve(self, raw: socket.socket) -> None:
        try:
            conn = self._tls.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            hard_close(raw)
            return
        with self._lock:
            self._conns.add(conn)
            if self._closed.is_set():
                self._cut(conn)  # close() ran during the handshake
        # The admin's certificate would win over a token (the API server tries client
        # certificates first): a request with a token goes on a connection without one.
        admin, bare = self.plane._http(timeout=30.0), self._tokens_only()
        try:
            reader = conn.makefile("rb")
            while not self._closed.is_set():
                request = read_request(reader)
                upstream = bare if request is not None and request.has_token else admin
                if request is None or not self._handle(conn, request, upstream):
                    break
        except (OSError, ssl.SSLError, httpx2.HTTPError, ValueError):
            pass
        finally:
            admin.close()
            bare.close()
            self._forget(conn)
            hard_close(conn)

    def _tokens_only(self) -> httpx2.Client:
        """A connection to the API server that trusts its CA and presents no certificate."""
        assert self.plane.pki is not None
        tls = ssl.create_default_context(cafile=str(self.plane.pki.ca_cert))
        return httpx2.Client(base_url=self.plane.server, verify=tls, timeout=30.0)

    def _forget(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)
            self._watches.pop(conn, None)

    def _pick_fault(self, request: Request) -> str | None:
        with self._lock:
            self.stats.requests += 1
            if request.is_watch and self._rng.random() < self.faults.gone:
                fault = "gone"
            elif self.faults.kinds and self._rng.random() < self.faults.rate:
                fault = self._rng.choice(self.faults.kinds)
            else:
                return None
            self.stats.faults[fault] += 1
            return fault

    def _handle(self, conn: socket.socket, request: Request, upstream: httpx2.Client) -> bool:
        """Answer one request; False when the connection must close."""
        self._wait_if_held(request)
        if self._closed.is_set():
            return False  # released by close(): nothing more to serve
        fault = self._pick_fault(request)
        if fault is not None:
            self._note(request, f"fault {fault}")
        if fault in ("429", "500"):
            send_status(conn, int(fault), retry_after=self.faults.retry_after)
            return True
        if fault == "gone":
            send_gone(conn)
            return True
        if fault == "timeout":
            # Say nothing until the client gives up (or the stall ends), then drop the line.
            self._closed.wait(self.faults.stall)
            return False
        if fault == "reset" and (request.is_watch or self._rng.random() < 0.5):
            if request.is_watch:
                with self._lock:
                    cut_after = self._rng.uniform(0, 5)
                return self._relay(conn, request, upstream, cut_after=cut_after)
            return False  # before the server saw it
        return self._relay(conn, request, upstream, drop_answer=fault == "reset")

    def _wait_if_held(self, request: Request) -> None:
        if not request.is_watch:
            return
        resource = resource_of(request.path)
        with self._lock:
            released = self._held.get(resource)
            if released is None:
                return
            self._waiting[resource] += 1
        self._note(request, "held")
        try:
            released.wait()  # close() releases every hold
        finally:
            with self._lock:
                self._waiting[resource] -= 1

    def _relay(
        self,
        conn: socket.socket,
        request: Request,
        upstream: httpx2.Client,
        *,
        drop_answer: bool = False,
        cut_after: float | None = None,
    ) -> bool:
        headers = [(k, v) for k, v in request.headers if k.lower() not in HOP_BY_HOP]
        timeout = httpx2.Timeout(30.0, read=None) if request.is_watch else httpx2.Timeout(60.0)
        upstream_request = upstream.build_request(
            request.method, request.target, headers=headers, content=request.body, timeout=timeout
        )
        response = upstream.send(upstream_request, stream=True)
        timer: threading.Timer | None = None
        self._relaying(conn, response)
        try:
            refusal = b""
            if request.is_write:
                refusal = response.read() if response.status_code >= 400 else b""
                self._record(request, response.status_code, refusal)
            if drop_answer:
                return False  # the server acted; the answer is lost with the connection
            if request.is_watch:
                with self._lock:
                    self._watches[conn] = resource_of(request.path)
                if cut_after is not None:
                    timer = threading.Timer(cut_after, self._cut_if_open, args=(conn,))
                    timer.start()
            self._note(request, f"-> {response.status_code}")
            send_head(conn, response)
            for chunk in [refusal] if refusal else response.iter_raw():
                if chunk:
                    conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            conn.sendall(b"0\r\n\r\n")
            if request.is_watch:
                self._note(request, "watch ended by the server")
            return True
        except OSError as err:
            if request.is_watch:
                self._note(request, f"watch cut ({type(err).__name__})")
            raise
        finally:
            if timer is not None:
                timer.cancel()
                timer.join()
            with self._lock:
                self._watches.pop(conn, None)
                self._upstreams.pop(conn, None)
            response.close()

    def _relaying(self, conn: socket.socket, response: httpx2.Response) -> None:
        """Note the upstream socket of ``response``, so that a cut can wake its reader."""
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._upstreams[conn] = sock
            if self._closed.is_set():  # close() swept before this response was noted
                self._cut(conn)

    def _record(self, request: Request, status: int, refusal: bytes) -> None:
        manager = request.params.get("fieldManager", [""])[0]
        with self._lock:
            write = Write(request.method, request.path, status, manager, request.body, refusal)
            self.writes.append(write)
            index = len(self.writes)
        if self.on_write is not None:
            self.on_write(index, write)


# -- HTTP/1.1 on a socket ------------------------------------------------------------------


def read_request(reader: BinaryIO) -> Request | None:
    line = reader.readline(65536)
    if not line:
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers: list[tuple[str, str]] = []
    while True:
        line = reader.readline(65536)
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    lower = {k.lower(): v for k, v in headers}
    if lower.get("transfer-encoding", "").lower() == "chunked":
        body = read_chunked(reader)
    else:
        body = reader.read(int(lower.get("content-length", "0") or 0))
    return Request(method, target, headers, body)


def read_chunked(reader: BinaryIO) -> bytes:
    parts = []
    while True:
        size = int(reader.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            reader.readline()
            return b"".join(parts)
        parts.append(reader.read(size))
        reader.readline()


def send_head(conn: socket.socket, response: httpx2.Response) -> None:
    lines = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
    lines += [f"{k}: {v}" for k, v in response.headers.items() if k.lower() not in HOP_BY_HOP]
    lines.append("Transfer-Encoding: chunked")
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def send_body(conn: socket.socket, status: int, body: bytes, *extra: str) -> None:
    head = [
        f"HTTP/1.1 {status} {REASONS.get(status, '')}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        *extra,
    ]
    conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


def send_status(conn: socket.socket, code: int, *, retry_after: int) -> None:
    reason = "TooManyRequests" if code == 429 else "InternalError"
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": f"injected by the chaos proxy ({code})",
        "reason": reason,
        "code": code,
    }
    extra = (f"Retry-After: {retry_after}",) if code == 429 else ()
    send_body(conn, code, orjson.dumps(status), *extra)


def send_gone(conn: socket.socket) -> None:
    """What the API server streams to a watch whose resourceVersion etcd compacted away."""
    event = {
        "type": "ERROR",
        "object": {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "too old resource version: 1 (2)",
            "reason": "Expired",
            "code": 410,
        },
    }
    send_body(conn, 200, orjson.dumps(event) + b"\n")
