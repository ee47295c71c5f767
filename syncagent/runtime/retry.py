"""Per-request retries of transient API failures, below every caller (an httpx2 transport).

A reconcile makes dozens of requests; failing all of it for one 429 or one reset connection,
and backing the whole graph off, is what client-go avoids by retrying the request itself. The
rules (docs/retries.md):

- 429 Too Many Requests: the server did not act (API Priority and Fairness rejected it), so any
  request is retried, after ``Retry-After`` when the server sent one;
- 500, 502, 503, 504 and a transport error after the request was sent (reset, read timeout):
  retried only for requests that are safe to repeat: GET/HEAD/OPTIONS, PUT (guarded by
  ``resourceVersion``), DELETE (guarded by its UID precondition) and server-side apply;
  never a create (POST) or another kind of PATCH, whose repetition could act twice;
- except a 500 whose Status says the request cannot fit the served schema ("failed to create
  typed patch object": an applied field the schema does not declare): the same request fails
  the same way every time, so it goes straight back to the caller;
- a connection that could not be made (connect error or connect timeout): nothing was sent, so
  any request is retried;
- at most ``attempts`` tries and ``total`` seconds per request; ``Retry-After`` is honoured up
  to ``max_retry_after`` (a longer wait gives up and lets the caller's own backoff act).

Every retry is counted in ``syncagent_api_retries_total{verb, reason}``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import anyio
import httpx2

from syncagent.runtime.backoff import Backoff
from syncagent.runtime.metrics import Metrics, Registry

log = logging.getLogger(__name__)

APPLY_PATCH = "application/apply-patch+yaml"
REPEATABLE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
RETRIED_STATUS = frozenset({500, 502, 503, 504})
# structured-merge-diff refused the applied object itself (HTTP 500, not transient).
SCHEMA_REFUSED = b"failed to create typed patch object"
NOT_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout)
TRANSIENT = (
    httpx2.ReadError,
    httpx2.WriteError,
    httpx2.ReadTimeout,
    httpx2.WriteTimeout,
    httpx2.RemoteProtocolError,
)


class RetryMetrics:
    """Requests sent again."""

    def __init__(self, r: Registry) -> None:
        self.api_retries = r.counter(
            "syncagent_api_retries_total",
            "API requests sent again after a transient failure, by verb and reason "
            "(HTTP status code, connect, reset, timeout).",
            ("verb", "reason"),
        )


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long one request is retried (see the module docstring)."""

    attempts: int = 5
    total: float = 30.0
    max_retry_after: float = 10.0
    backoff: Backoff = field(default_factory=lambda: Backoff(base=0.2, cap=4.0, jitter=0.3))

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.total <= 0 or self.max_retry_after < 0:
            raise ValueError(
                f"retry policy: need attempts >= 1, total > 0, max_retry_after >= 0; got {self}"
            )


def repeatable(request: httpx2.Request) -> bool:
    """Whether sending ``request`` twice has the effect of sending it once."""
    if request.method in REPEATABLE_METHODS:
        return True
    content_type = request.headers.get("Content-Type", "")
    return request.method == "PATCH" and content_type.startswith(APPLY_PATCH)


def retry_after(response: httpx2.Response) -> float | None:
    """The ``Retry-After`` delay in seconds (the API server sends whole seconds), if any."""
    value = response.headers.get("Retry-After", "").strip()
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def verb_of(request: httpx2.Request) -> str:
    """The Kubernetes verb, for the metric (``watch`` for a watch GET)."""
    if request.method == "GET":
        watch = parse_qs(request.url.query.decode() if request.url.query else "").get("watch")
        return "watch" if watch and watch[0] in ("true", "1") else "get"
    if request.method == "PATCH":
        return "apply" if repeatable(request) else "patch"
    return {"POST": "create", "PUT": "update", "DELETE": "delete"}.get(
        request.method, request.method.lower()
    )


class RetryTransport(httpx2.AsyncBaseTransport):
    """Wraps ``inner`` (the real connection pool, or a ``MockTransport`` in tests)."""

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        *,
        policy: RetryPolicy | None = None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self._metrics = metrics
        self._clock = clock
        self._sleep = sleep

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        started = self._clock()
        attempt = 1
        while True:
            try:
                response = await self.inner.handle_async_request(request)
            except (*NOT_SENT, *TRANSIENT) as err:
                delay = self._transport_delay(request, err, attempt)
                if delay is None or not self._in_budget(started, delay):
                    raise
                reason = "connect" if isinstance(err, NOT_SENT) else _error_reason(err)
            else:
                if response.status_code == 500 and await _schema_refused(response):
                    return response
                delay = self._status_delay(request, response, attempt)
                if delay is None or not self._in_budget(started, delay):
                    return response
                await response.aclose()
                reason = str(response.status_code)
            self._count(request, reason, attempt, delay)
            await self._sleep(delay)
            attempt += 1

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _transport_delay(
        self, request: httpx2.Request, err: Exception, attempt: int
    ) -> float | None:
        if attempt >= self.policy.attempts:
            return None
        if isinstance(err, NOT_SENT) or repeatable(request):
            return self.policy.backoff.delay(attempt)
        return None

    def _status_delay(
        self, request: httpx2.Request, response: httpx2.Response, attempt: int
    ) -> float | None:
        code = response.status_code
        if attempt >= self.policy.attempts:
            return None
        if code == 429 or (code in RETRIED_STATUS and repeatable(request)):
            after = retry_after(response)
            if after is None:
                return self.policy.backoff.delay(attempt)
            return after if after <= self.policy.max_retry_after else None
        return None

    def _in_budget(self, started: float, delay: float) -> bool:
        return self._clock() - started + delay <= self.policy.total

    def _count(self, request: httpx2.Request, reason: str, attempt: int, delay: float) -> None:
        verb = verb_of(request)
        if self._metrics is not None:
            self._metrics.of(RetryMetrics).api_retries.inc(verb=verb, reason=reason)
        log.debug(
            "retrying API request",
            extra={
                "verb": verb,
                "path": request.url.path,
                "reason": reason,
                "attempt": attempt,
                "retry_in": round(delay, 3),
            },
        )


async def _schema_refused(response: httpx2.Response) -> bool:
    return SCHEMA_REFUSED in await response.aread()


def _error_reason(err: Exception) -> str:
    if isinstance(err, httpx2.TimeoutException):
        return "timeout"
    return "reset"


def install(
    http: httpx2.AsyncClient, *, policy: RetryPolicy | None = None, metrics: Metrics | None = None
) -> None:
    """Wrap every transport of ``http`` (the default one and any proxy mounts) in retries."""
    http._transport = RetryTransport(http._transport, policy=policy, metrics=metrics)
    http._mounts = {
        pattern: None
        if transport is None
        else RetryTransport(transport, policy=policy, metrics=metrics)
        for pattern, transport in http._mounts.items()
    }
