"""A clock the test moves by hand, for code that takes ``clock=`` (no tests here)."""

from __future__ import annotations


class HandClock:
    """Seconds as the code under test reads them (``clock()``); the test sets or adds to
    ``now``, so a test never sleeps to let time pass."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
