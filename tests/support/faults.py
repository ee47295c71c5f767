"""Faults between the agent and the API server (no tests here).

:class:`FaultProxy` forwards the agent's connections to the real server until the test cuts it;
the agent then sees the server as unreachable (connections reset, new ones refused).
"""

from __future__ import annotations

import contextlib
import socket
import threading


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
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            if not self._up.is_set():
                hard_close(conn)
                continue
            try:
                upstream = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                hard_close(conn)
                continue
            with self._lock:
                # A cut that ran while this connection was being opened must drop it too, or
                # it would live on (keep-alive) past the cut, unseen by cut's snapshot.
                if not self._up.is_set():
                    hard_close(conn)
                    hard_close(upstream)
                    continue
                self._sockets |= {conn, upstream}
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            with self._lock:
                self._sockets -= {src, dst}

    def cut(self) -> None:
        self._up.clear()
        with self._lock:
            sockets = list(self._sockets)
            self._sockets.clear()
        for s in sockets:
            hard_close(s)

    def restore(self) -> None:
        self._up.set()

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()


def hard_close(s: socket.socket) -> None:
    # shutdown() wakes a pump thread blocked in recv(); close() alone would not, and the
    # connection would stay open. Linger 0 then makes close() send a reset.
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
