"""The write fence: no mutating request leaves the process once its leadership has ended.

The elector ends the leader's work at its deadline with a cancel scope, which acts only when
the event loop gets to it: a task that was ready before a stall (a GC pause, a large answer to
decode, CPU throttling) runs first and would send its write late. So the deadline is checked
where the request is sent, synchronously: when the agent's HTTP client takes a mutating request
(an event hook), and again by httpcore's ``trace`` extension just before it writes the
request's headers and just before its body, in the same event-loop step as the socket write.
A retry is a new send, checked again. A refused request raises :class:`NotLeader` before any
byte of it is written (a body refused after its headers leaves a request the server never
completes: the connection is closed).

Mutating: POST, PUT, PATCH and DELETE, dry runs included (a dry run is asked only to decide a
write, which would be refused too). Not fenced: the elector's own Lease requests (its renewals
must go through; the Lease's resourceVersion fences them) and the review APIs of
``authentication.k8s.io`` and ``authorization.k8s.io``, which store nothing (followers check
metrics scrapers with them). docs/runtime.md §1 says what this guarantees and what it cannot.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpx2

from syncagent.runtime import leaseclock

log = logging.getLogger(__name__)

MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
REVIEW_GROUPS = ("/apis/authentication.k8s.io/", "/apis/authorization.k8s.io/")
# httpcore's trace events (``http11.…``, ``http2.…``) right before bytes of a request go out.
SENDS = (".send_request_headers.started", ".send_request_body.started")

Trace = Callable[[str, dict[str, Any]], Awaitable[None]]


class NotLeader(Exception):
    """A write was not sent because this process does not lead (any more). Nothing to repair:
    the next leader, or this process once it leads again, makes the change."""


def fenced(method: str, path: str, *, exempt: Iterable[str] = ()) -> bool:
    """Whether sending ``method path`` needs leadership (module docstring)."""
    if method.upper() not in MUTATING:
        return False
    if any(group in path for group in REVIEW_GROUPS):
        return False
    return not any(path.endswith(own) for own in exempt)


class Fence:
    """The deadline of this process's leadership, as the sends see it.

    Closed until leading starts, open until the deadline, closed for good once a send finds
    the deadline passed (a later renewal does not reopen it: that term of leading is over) and
    when leading ends.
    """

    def __init__(
        self, *, lease: str, exempt: Iterable[str] = (), clock: Callable[[], float] = leaseclock.now
    ) -> None:
        self.lease = lease  # Lease/<namespace>/<name>, for the refusal's message
        self.exempt = tuple(exempt)
        self._clock = clock
        self._until: float | None = None
        self._on_expiry: Callable[[], None] | None = None
        self.refused = 0  # sends refused so far (the tests print it)

    def open_until(self, until: float, *, on_expiry: Callable[[], None]) -> None:
        """Leading starts: writes go until ``until`` (leadership clock); the first send that
        finds it passed calls ``on_expiry`` (which ends leading) and is refused."""
        self._until = until
        self._on_expiry = on_expiry

    def extend(self, until: float) -> bool:
        """A confirmed renewal moves the deadline; False when it had passed already."""
        if self.expired():
            return False
        self._until = max(self._until, until)
        return True

    def close(self) -> None:
        """Leading ended: refuse every fenced send until :meth:`open_until`."""
        self._until = None
        self._on_expiry = None

    @property
    def until(self) -> float | None:
        return self._until

    def expired(self) -> bool:
        """Whether fenced sends are refused now."""
        return self._until is None or self._clock() >= self._until

    def check(self, method: str, path: str) -> None:
        """Raise :class:`NotLeader` unless ``method path`` may be sent now."""
        if not fenced(method, path, exempt=self.exempt):
            return
        now = self._clock()
        if self._until is not None and now < self._until:
            return
        self.refused += 1
        expired, self._on_expiry = self._on_expiry, None
        if expired is not None:
            expired()
        raise NotLeader(self._refusal(method, path, now))

    def _refusal(self, method: str, path: str, now: float) -> str:
        if self._until is None:
            why = "this agent does not lead"
        else:
            why = f"this agent's leadership ended {now - self._until:.3f}s ago (renew deadline)"
        return (
            f"{self.lease}: {method} {path} not sent: {why}; nothing to do, the leader "
            "makes the change"
        )


def install(http: httpx2.AsyncClient, fence: Fence) -> None:
    """Check ``fence`` on every send of a mutating request of ``http`` (module docstring)."""

    async def on_request(request: httpx2.Request) -> None:
        method, path = request.method, request.url.path
        if not fenced(method, path, exempt=fence.exempt):
            return
        fence.check(method, path)
        request.extensions["trace"] = _at_send(fence, method, path, request.extensions.get("trace"))

    hooks = http.event_hooks
    http.event_hooks = {
        "request": [*hooks.get("request", []), on_request],
        "response": hooks.get("response", []),
    }


def _at_send(fence: Fence, method: str, path: str, inner: Trace | None) -> Trace:
    """An httpcore ``trace`` callback checking ``fence`` right before bytes are written.

    It must not await before the check: httpcore awaits it directly, and the socket write
    follows in the same event-loop step only while nothing in between yields.
    """

    async def trace(event: str, info: dict[str, Any]) -> None:
        if inner is not None:
            await inner(event, info)  # first: nothing may run between the check and the write
        if event.endswith(SENDS):
            fence.check(method, path)

    return trace


def not_leader(err: BaseException) -> NotLeader | None:
    """``err`` when it is a :class:`NotLeader`, or the first of a group made only of them."""
    if isinstance(err, NotLeader):
        return err
    if isinstance(err, BaseExceptionGroup):
        matched, rest = err.split(NotLeader)
        if matched is not None and rest is None:
            return next(_leaves(matched))
    return None


def _leaves(group: BaseExceptionGroup) -> Iterable[NotLeader]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        elif isinstance(exc, NotLeader):
            yield exc
