"""Discovery of the optional API groups at start and on a timer (spec/routing.md §1).

A discovery error is not absence: the last successful snapshot stays. Before the first success
:attr:`Discovery.capabilities` is ``None`` and nothing should be reconciled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping

import anyio
import anyio.abc
from lightkube import AsyncClient

from syncagent.runtime import capabilities as caps
from syncagent.runtime.capabilities import Capabilities, GroupVersionResource, Setting
from syncagent.runtime.client import request_json, status_code
from syncagent.runtime.metrics import Metrics, default_metrics

log = logging.getLogger(__name__)

# The group/versions the agent can use without being sure they are served.
OPTIONAL_GROUP_VERSIONS: tuple[tuple[str, str], ...] = (
    ("grove.io", "v1alpha1"),
    ("leaderworkerset.x-k8s.io", "v1"),
    ("disaggregatedset.x-k8s.io", "v1"),
    ("nvidia.com", "v1alpha1"),
)

Listener = Callable[[Capabilities | None, Capabilities], None]


class DiscoveryError(Exception):
    """Discovery could not tell what is served (transport error, 5xx, timeout)."""


def _path(group: str, version: str) -> str:
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


async def served_resources(
    client: AsyncClient,
    group_versions: Iterable[tuple[str, str]],
    *,
    request_timeout: float = 10.0,
) -> frozenset[GroupVersionResource]:
    """The resources (no subresources) served under ``group_versions``; 404 = not served."""
    served: set[GroupVersionResource] = set()
    for group, version in group_versions:
        try:
            doc = await request_json(
                client, "GET", _path(group, version), request_timeout=request_timeout
            )
        except Exception as err:
            if status_code(err) == 404:
                continue
            raise DiscoveryError(f"discovery of {group}/{version} failed: {err}") from err
        for res in doc.get("resources") or ():
            name = res.get("name", "")
            if name and "/" not in name:
                served.add(GroupVersionResource(group, version, name))
    return frozenset(served)


class Discovery:
    """Keeps a :class:`Capabilities` snapshot fresh and tells listeners when it changes."""

    def __init__(
        self,
        client: AsyncClient,
        *,
        settings: Mapping[str, Setting] | None = None,
        group_versions: Iterable[tuple[str, str]] = OPTIONAL_GROUP_VERSIONS,
        interval: float = 60.0,
        timeout: float = 10.0,
        metrics: Metrics | None = None,
    ) -> None:
        self._client = client
        self._settings = dict(settings or caps.capability_overrides(()))
        self._group_versions = tuple(group_versions)
        self._interval = interval
        self._timeout = timeout
        self._metrics = metrics or default_metrics()
        self._listeners: list[Listener] = []
        self._current: Capabilities | None = None
        self._ready: anyio.Event | None = None
        self._refresh_now: anyio.Event | None = None

    @property
    def capabilities(self) -> Capabilities | None:
        """The last successful snapshot; ``None`` before the first success."""
        return self._current

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(old, new)`` after every change (and after the first success)."""
        self._listeners.append(listener)

    def request_refresh(self) -> None:
        """Refresh now, e.g. after a request failed with "no matches for kind"."""
        if self._refresh_now is not None:
            self._refresh_now.set()

    async def wait_ready(self) -> Capabilities:
        while self._current is None:
            if self._ready is None:
                self._ready = anyio.Event()
            await self._ready.wait()
        return self._current

    async def refresh(self, *, strict: bool = False) -> Capabilities:
        """Discover once. Raises :class:`DiscoveryError` (snapshot kept) or, with ``strict``,
        :class:`~syncagent.runtime.capabilities.CapabilityRequiredError`."""
        served = await served_resources(
            self._client, self._group_versions, request_timeout=self._timeout
        )
        new = caps.resolve(served, self._settings, strict=strict)
        old, self._current = self._current, new
        if old != new:
            self._publish(old, new)
        return new

    async def start(self) -> Capabilities:
        """The first discovery: strict about required capabilities, errors propagate."""
        return await self.refresh(strict=True)

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Refresh every ``interval`` seconds (or on :meth:`request_refresh`) until cancelled.

        Call :meth:`start` first when the agent must refuse to start without a capability.
        """
        task_status.started()
        due = self._current is None  # start() already discovered once
        while True:
            if due:
                try:
                    await self.refresh()
                except DiscoveryError as err:
                    log.warning(
                        "discovery failed; keeping the last result", extra={"error": str(err)}
                    )
            due = True
            self._refresh_now = anyio.Event()
            # Until the first success nothing is reconciled, so retry sooner.
            delay = self._interval if self._current is not None else min(self._interval, 5.0)
            with anyio.move_on_after(delay):
                await self._refresh_now.wait()

    def _publish(self, old: Capabilities | None, new: Capabilities) -> None:
        for name, on in new.as_dict().items():
            self._metrics.capabilities.set(1 if on else 0, name=name)
        if self._ready is not None:
            self._ready.set()
        log.info("capabilities changed", extra={"capabilities": new.as_dict()})
        for listener in list(self._listeners):
            listener(old, new)
