"""List+watch of one kind into a :class:`Cache` (an informer).

- lists (paginated) and stores the result, then watches from the list's resourceVersion;
- asks for bookmarks, so a quiet watch still advances its resourceVersion;
- when a watch ends (server timeout, dropped connection) it resumes from the last
  resourceVersion it saw, without listing again;
- on 410 Gone (the resourceVersion was compacted away) it lists again; the cache reports the
  objects that vanished meanwhile as deleted;
- other errors back off with jitter and retry; a 404 (API no longer served) also calls
  ``on_not_found`` so discovery can refresh.
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
import anyio.abc
import httpx2
import orjson
from httpx2 import AsyncClient
from lightkube.core import resource as r
from lightkube.core.exceptions import ApiError
from lightkube.core.resource import api_info

from syncagent.rest.request import Request, build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call, raise_for_status, status_code, stream
from syncagent.runtime.backoff import Backoff
from syncagent.runtime.cache import Cache, Obj, identity
from syncagent.runtime.metrics import Metrics, Registry, default_metrics

log = logging.getLogger(__name__)

T = TypeVar("T")

LIST_PAGE_SIZE = 500


class WatchMetrics:
    """A watch's relists and the size of its cache."""

    def __init__(self, r: Registry) -> None:
        self.watch_relists = r.counter(
            "syncagent_watch_relists_total",
            "Full relists of a watched resource (start, 410 Gone).",
            ("resource",),
        )
        self.cache_objects = r.gauge(
            "syncagent_cache_objects", "Objects held in a watch cache.", ("resource",)
        )


@dataclass(frozen=True)
class WatchTarget:
    """What to watch: a resource, optionally one namespace, optionally label/field selected."""

    resource: Resource
    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None

    @classmethod
    def of(
        cls,
        res: type[Any],
        *,
        namespace: str | None = None,
        labels: str | Mapping[str, str] | None = None,
        fields: str | Mapping[str, str] | None = None,
    ) -> WatchTarget:
        """The target for a lightkube resource class (typed or generic)."""
        info = api_info(res)
        resource = Resource(
            info.resource.group,
            info.resource.version,
            info.resource.kind,
            info.plural,
            namespaced=issubclass(res, r.NamespacedResource | r.NamespacedSubResource),
        )
        return cls(resource, namespace, selector(labels), selector(fields))

    def request(self, verb: str, params: Mapping[str, str]) -> Request:
        """The list or watch request of this target (``params``: paging, resourceVersion)."""
        selectors = {"labelSelector": self.label_selector, "fieldSelector": self.field_selector}
        query = {k: v for k, v in selectors.items() if v} | dict(params)
        return build(self.resource, verb, namespace=self.namespace or "", params=query)

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        sel = f" ({self.label_selector})" if self.label_selector else ""
        return f"{self.resource.gvr}{where}{sel}"


def selector(value: str | Mapping[str, str] | None) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    return ",".join(f"{k}={v}" for k, v in sorted(value.items())) or None


def first_response_timeout(http: httpx2.AsyncClient) -> float:
    """How long a watch waits for its response headers: the client's request timeout."""
    timeout = http.timeout
    return max(t for t in (timeout.connect, timeout.read, 1.0) if t is not None)


class Gone(Exception):
    """410: the resourceVersion is too old; list again."""


class ShortWatch(Exception):
    """The server ended a watch at once without sending anything; back off before retrying."""


class WatchStatusError(Exception):
    """The watch stream sent an ERROR event other than 410."""

    def __init__(self, status: Obj) -> None:
        super().__init__(status.get("message") or str(status))
        self.code = status.get("code")


@dataclass(frozen=True)
class WatchEvent:
    type: str
    object: Obj


def decode_event(line: str | bytes) -> WatchEvent:
    data = orjson.loads(line)
    return WatchEvent(data["type"], data.get("object") or {})


def resource_version(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion", "")


class Informer(Generic[T]):
    """Keeps ``cache`` equal to the server's objects for ``target``."""

    def __init__(
        self,
        client: AsyncClient,
        target: WatchTarget,
        *,
        transform: Callable[[Obj], T] = identity,
        cache: Cache[T] | None = None,
        resource_version: str | None = None,
        watch_timeout: float | None = None,
        backoff: Backoff | None = None,
        metrics: Metrics | None = None,
        on_not_found: Callable[[], None] | None = None,
    ) -> None:
        """``cache`` lets a cache outlive its informer (a watch stopped and started again with
        its API). ``resource_version`` resumes a watch from a known version instead of listing first
        (the cache counts as synced only after a list, which a 410 triggers). ``watch_timeout``
        is the server-side watch timeout; by default 5 to 10 minutes, spread so watches do not
        all reconnect together."""
        self.client = client
        self.target = target
        self.cache: Cache[T] = (
            cache if cache is not None else Cache(str(target), transform=transform)
        )
        self._rv = resource_version
        self._watch_timeout = watch_timeout
        # A short cap: after an API server outage the caches should catch up within seconds.
        self._backoff = backoff or Backoff(base=0.5, cap=10.0)
        self._metrics = metrics or default_metrics()
        self._on_not_found = on_not_found
        self.failures = 0  # consecutive failed list/watch attempts
        self._label = (
            f"{target.namespace}/{target.resource.plural}"
            if target.namespace
            else target.resource.plural
        )

    @property
    def resource_version(self) -> str | None:
        """The last resourceVersion seen (list, event or bookmark)."""
        return self._rv

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """List and watch until cancelled."""
        task_status.started()
        while True:
            try:
                if self._rv is None:
                    await self._list()
                await self._watch()
            except Gone:
                log.info("watch expired; listing again", extra={"resource": str(self.target)})
                self._rv = None
                self.failures = 0
            except Exception as err:
                # Any failure (transport, a Status, a malformed object, a watch that ends at
                # once) retries with backoff: one bad watch must not stop the agent.
                self.failures += 1
                await self._after_error(err, self.failures)

    async def _after_error(self, err: BaseException, failures: int) -> None:
        code = status_code(err)
        if code == 404 and self._on_not_found is not None:
            self._on_not_found()
        delay = self._backoff.delay(failures)
        log.warning(
            "watch failed; retrying",
            extra={
                "resource": str(self.target),
                "error": str(err) or type(err).__name__,
                "code": code,
                "retry_in": round(delay, 3),
            },
        )
        await anyio.sleep(delay)

    async def _list(self) -> None:
        # Each page goes into the cache as it arrives: a relist of thousands of objects never
        # holds them all decoded at once (the cache keeps them compact).
        relist = self.cache.relist()
        params = {"limit": str(LIST_PAGE_SIZE)}
        while True:
            try:
                page = await call(self.client, self.target.request("list", params))
            except ApiError as err:
                if err.status.code == 410 and "continue" in params:
                    # The continue token expired mid-list: start the list again.
                    params.pop("continue")
                    relist.restart()
                    continue
                raise
            kind = (page.get("kind") or "").removesuffix("List")
            items = page.get("items") or ()
            for item in items:
                # List items of built-in kinds come without kind/apiVersion; watch events have them.
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", page.get("apiVersion"))
                relist.add(item)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                break
            params["continue"] = token
            del page, items
        rv = (page.get("metadata") or {}).get("resourceVersion", "")
        relist.finish(rv)
        self._rv = rv
        self._metrics.of(WatchMetrics).watch_relists.inc(resource=self._label)
        self._metrics.of(WatchMetrics).cache_objects.set(len(self.cache), resource=self._label)

    def _timeout(self) -> int:
        if self._watch_timeout is not None:
            return max(1, int(self._watch_timeout))
        return int(300 * (1 + random.random()))

    async def _watch(self) -> None:
        server_timeout = self._timeout()
        params = {
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(server_timeout),
            "resourceVersion": self._rv or "",
        }
        # The server ends the watch after timeoutSeconds; a read timeout beyond that catches
        # a connection that died silently.
        timeout = httpx2.Timeout(10.0, read=server_timeout + 30.0)
        started = anyio.current_time()
        received = 0
        async with contextlib.AsyncExitStack() as stack:
            # The long read timeout is for the stream; its first response gets no more than
            # any other request, or a server that never answers would stall this watch (and
            # every change it should deliver) for the whole watch timeout.
            with anyio.fail_after(first_response_timeout(self.client)):
                resp = await stack.enter_async_context(
                    stream(
                        self.client, self.target.request("watch", params), request_timeout=timeout
                    )
                )
            if resp.status_code == 410:
                raise Gone()
            if not resp.is_success:
                await resp.aread()
                raise_for_status(resp)
            self.failures = 0
            async for line in resp.aiter_lines():
                if line.strip():
                    received += 1
                    self.handle(decode_event(line))
        if not received and anyio.current_time() - started < min(1.0, server_timeout / 2):
            raise ShortWatch(f"{self.target}: watch ended at once without events")

    def handle(self, event: WatchEvent) -> None:
        """Apply one watch event to the cache and advance the resourceVersion."""
        obj = event.object
        if event.type == "ERROR":
            if obj.get("code") == 410:
                raise Gone()
            raise WatchStatusError(obj)
        if event.type in ("ADDED", "MODIFIED"):
            self.cache.upsert(obj)
        elif event.type == "DELETED":
            self.cache.delete(obj)
        elif event.type != "BOOKMARK":
            log.warning("unknown watch event", extra={"type": event.type})
            return
        rv = resource_version(obj)
        if rv:
            self._rv = rv
            self.cache.resource_version = rv
        self._metrics.of(WatchMetrics).cache_objects.set(len(self.cache), resource=self._label)
