"""No test leaves a thread of its own running (no tests here).

A thread that outlives its test may still be reading a connection the test's fixtures have
closed; the file descriptor then goes to the next socket the process opens (another test's
TLS connection to the API server), and the old thread reads its bytes: that test fails with
``WRONG_VERSION_NUMBER`` or a read timeout, far from the cause. So a thread a test starts must
have ended once the test's fixtures are torn down (a short grace lets a stopping one finish).
"""

from __future__ import annotations

import threading
import time

import pytest

GRACE = 15.0

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
