"""No test leaves a thread of its own running (no tests here).

A thread that outlives its test may still be reading a connection the test's fixtures have
closed; the file descriptor then goes to the next socket the process opens (another test's
TLS connection to the API server), and the old thread reads its bytes: that test fails with
``WRONG_VERSION_NUMBER`` or a read timeout, far from the cause. So a thread a test starts must
have ended once the test's fixtures are torn down (a short grace lets a stopping one finish).

A helper that serves or relays connections (the fault proxies) starts its threads through
:class:`Threads` and, on close, wakes each blocked one by shutting its socket down
(``socket.socket.shutdown(sock, SHUT_RDWR)``, which leaves an ``SSLSocket``'s SSL object alone)
and joins them with :meth:`Threads.join_all`. It never closes a socket another thread reads:
the thread that owns a socket closes it once woken.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

GRACE = 15.0
JOIN_DEADLINE = 10.0  # for a helper's close(): its threads were woken, so they end at once

_BEFORE = pytest.StashKey[set[int]]()


def record(item: pytest.Item) -> None:
    item.stash[_BEFORE] = {t.ident for t in threading.enumerate() if t.ident is not None}


def left_running(item: pytest.Item) -> list[str]:
    """The threads started during ``item`` still alive after the grace (names and targets)."""
    before = item.stash.get(_BEFORE, set())
    deadline = time.monotonic() + GRACE
    while True:
        started = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
        if not started or time.monotonic() > deadline:
            return [f"{t.name} ({getattr(t, '_target', None)!r})" for t in started]
        started[0].join(timeout=0.1)


class Threads:
    """The threads a test helper starts, so that closing it can wait for every one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def start(self, target: Callable[..., object], *args: object) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, daemon=True)
        with self._lock:  # started under the lock: join_all never sees one not yet alive
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
            thread.start()
        return thread

    def join_all(self, owner: str, *, deadline: float = JOIN_DEADLINE) -> None:
        """Wait for every thread; raise naming those still running after ``deadline`` s."""
        end = time.monotonic() + deadline
        while True:
            with self._lock:
                alive = [t for t in self._threads if t.is_alive()]
            if not alive:
                return
            remaining = end - time.monotonic()
            if remaining <= 0:
                names = ", ".join(f"{t.name} ({getattr(t, '_target', None)!r})" for t in alive)
                raise AssertionError(f"{owner}: threads still running after close(): {names}")
            alive[0].join(timeout=remaining)
