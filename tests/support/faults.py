"""Faults between the agent and the API server (no tests here).

:class:`FaultProxy` forwards the agent's connections to the real server until the test cuts it;
the agent then sees the server as unreachable (connections reset, new ones refused).

Every socket is closed by the thread that reads it: a cut or :meth:`FaultProxy.close` only
shuts sockets down (which wakes a blocked ``recv`` or ``accept``), because a descriptor closed
under a reading thread goes to the next socket the process opens, and that thread would then
read someone else's connection.
"""

from __future__ import annotations

import contextlib
import socket
import threading

from tests.support.threads import Threads

LINGER_RESET = b"\x01\x00\x00\x00\x00\x00\x00\x00"  # on, 0 s: close() sends a reset


class FaultProxy:
    """Forwards loopback TCP connections to ``upstream``; :meth:`cut` drops every connection
    and refuses new ones (the API server is unreachable) until :meth:`restore`."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._up = threading.Event()
        self._up.set()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False
        self._threads = Threads()
        self._threads.start(self._accept)

    def _accept(self) -> None:
        try:
            while not self._closed:
                try:
                    conn, _ = self._listener.accept()
                except OSError:
                    return
                self._open(conn)
        finally:
            self._listener.close()

    def _open(self, conn: socket.socket) -> None:
        if not self._up.is_set() or self._closed:
            hard_close(conn)
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            hard_close(conn)
            return
        # The 5 s bound the connect only: a quiet watch must not be dropped by the proxy.
        upstream.settimeout(None)
        with self._lock:
            # A cut that ran while this connection was being opened must drop it too, or
            # it would live on (keep-alive) past the cut, unseen by cut's snapshot.
            if not self._up.is_set() or self._closed:
                hard_close(conn)
                hard_close(upstream)
                return
            self._sockets |= {conn, upstream}
        pair = _Pair()
        for a, b in ((conn, upstream), (upstream, conn)):
            self._threads.start(self._pump, a, b, pair)

    def _pump(self, src: socket.socket, dst: socket.socket, pair: _Pair) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):  # wakes the other pump of the pair
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            if pair.done():  # the last pump of the pair: nobody reads these sockets now
                with self._lock:
                    self._sockets -= {src, dst}
                for s in (src, dst):
                    s.close()

    def cut(self) -> None:
        self._up.clear()
        with self._lock:  # under the lock: the pumps close a socket only once it left the set
            for s in self._sockets:
                reset(s)

    def restore(self) -> None:
        self._up.set()

    def close(self) -> None:
        self._closed = True
        self.cut()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept(); close() would not
        self._threads.join_all(f"FaultProxy to {self.upstream}")


class _Pair:
    """The two pumps of one connection: the one that ends last closes its sockets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 2

    def done(self) -> bool:
        with self._lock:
            self._running -= 1
            return self._running == 0


def reset(s: socket.socket) -> None:
    """Wake the thread reading ``s`` and make its close() send a reset; the reader closes it.

    An ``SSLSocket`` is shut down as a plain socket: its SSL object belongs to the reader.
    """
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RESET)
    with contextlib.suppress(OSError):
        socket.socket.shutdown(s, socket.SHUT_RDWR)


def hard_close(s: socket.socket) -> None:
    """Reset and close ``s``; only for the thread that owns it (see :func:`reset`)."""
    reset(s)
    with contextlib.suppress(OSError):
        s.close()
