"""The one way a test waits: poll a check until it holds, with a deadline.

Tests never sleep to synchronise. :func:`eventually` (threads, subprocesses, the API server) and
:func:`eventually_async` (inside an event loop, where a blocking sleep would stop the very tasks
being waited for) share one rule and one failure message, which names what was awaited, how long
and how often it was tried, and the last value the check returned (or the error it raised).

A check "holds" when it returns something truthy; that value is returned. An
:class:`~tests.support.kube.ApiFailure` raised by the check counts as "not yet" (an object the
agent has not created, a server that is briefly away), and is reported as the last value.
``step``, when given, runs before every try: it plays a controller that this tier does not run
(a fake kubelet, a fake DisaggregatedSet controller), so the check sees the step's effect.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from tests.support.kube import ApiFailure


class _Attempts:
    """The bookkeeping both loops share: the deadline, the tries, the last value seen."""

    def __init__(self, deadline: float, what: str, now: Callable[[], float]) -> None:
        self.deadline, self.what, self._now = deadline, what, now
        self._start = now()
        self.tries = 0
        self.last: Any = None

    def expired(self) -> bool:
        return self._now() - self._start > self.deadline

    def failure(self) -> AssertionError:
        return AssertionError(
            f"timed out after {self.deadline}s ({self.tries} tries) waiting for {self.what}; "
            f"last: {self.last!r}"
        )


def eventually(
    check: Callable[[], Any],
    *,
    deadline: float,
    what: str,
    step: Callable[[], None] | None = None,
    interval: float = 0.1,
) -> Any:
    """Call ``step`` (if any) then ``check`` until ``check`` returns something truthy; return it.
    Raise ``AssertionError`` naming ``what`` and the last value after ``deadline`` seconds."""
    attempts = _Attempts(deadline, what, time.monotonic)
    while True:
        attempts.tries += 1
        try:
            if step is not None:
                step()
            attempts.last = check()
        except ApiFailure as err:
            attempts.last = err
        else:
            if attempts.last:
                return attempts.last
        if attempts.expired():
            raise attempts.failure()
        time.sleep(interval)


async def eventually_async(
    check: Callable[[], Any] | Callable[[], Awaitable[Any]],
    *,
    deadline: float,
    what: str,
    interval: float = 0.02,
) -> Any:
    """:func:`eventually` inside an event loop: ``check`` may be a plain or an async function;
    the tasks being waited for run between tries. A check that hangs is cut at the deadline."""
    attempts = _Attempts(deadline, what, anyio.current_time)
    with anyio.move_on_after(deadline + interval):
        while True:
            attempts.tries += 1
            try:
                result = check()
                attempts.last = await result if inspect.isawaitable(result) else result
            except ApiFailure as err:
                attempts.last = err
            else:
                if attempts.last:
                    return attempts.last
            if attempts.expired():
                break
            await anyio.sleep(interval)
    raise attempts.failure()
