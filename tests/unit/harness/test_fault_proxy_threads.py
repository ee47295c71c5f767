"""A fault proxy ends every thread it started when it closes (tests/support/threads.py): its
close() wakes threads blocked on a socket and joins them, and names any that stays."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest

from tests.support.faults import FaultProxy
from tests.support.threads import Threads

PAYLOAD = b"ping"


def test_join_all_names_a_thread_that_does_not_end() -> None:
    threads, stop = Threads(), threading.Event()
    threads.start(stop.wait)
    try:
        with pytest.raises(AssertionError, match=r"helper: threads still running.*wait"):
            threads.join_all("helper", deadline=0.2)
    finally:
        stop.set()
    threads.join_all("helper")


@contextlib.contextmanager
def _relayed() -> Iterator[tuple[FaultProxy, socket.socket]]:
    """A client connected through a proxy to an upstream that never answers: both pumps of
    the connection are blocked in recv()."""
    with socket.create_server(("127.0.0.1", 0)) as upstream:
        upstream.settimeout(10)
        proxy = FaultProxy(upstream.getsockname())
        try:
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client:
                client.sendall(PAYLOAD)
                peer, _ = upstream.accept()
                with peer:
                    peer.settimeout(10)
                    assert peer.recv(len(PAYLOAD)) == PAYLOAD  # relayed: the pumps run
                    yield proxy, client
        finally:
            proxy.close()


def _broken(client: socket.socket) -> bool:
    try:
        return client.recv(1) == b""
    except ConnectionResetError:
        return True


def test_close_ends_the_threads_blocked_on_an_open_connection() -> None:
    with _relayed() as (proxy, client):
        proxy.close()  # raises if a pump or the accept thread is still running
        assert _broken(client)


def test_a_cut_breaks_the_connection_and_refuses_new_ones() -> None:
    with _relayed() as (proxy, client):
        proxy.cut()
        assert _broken(client)
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as late:
            assert _broken(late)
