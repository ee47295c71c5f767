"""Graceful shutdown: the first SIGTERM/SIGINT asks the agent to stop; a second one forces it.

Stopping means: take no new keys, let reconciles in flight finish (bounded by a grace period),
then release the leader Lease. The run loop (``manager.py``) does those steps when
:attr:`Shutdown.requested` turns true.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Sequence

import anyio
import anyio.abc

log = logging.getLogger(__name__)

SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT)


class ForcedShutdown(Exception):
    """A second signal arrived while stopping gracefully."""


class Shutdown:
    """A one-way switch other tasks can wait on."""

    def __init__(self) -> None:
        self.reason = ""
        self._requested = False
        self._event: anyio.Event | None = None

    @property
    def requested(self) -> bool:
        return self._requested

    def request(self, reason: str) -> None:
        if self._requested:
            return
        self._requested = True
        self.reason = reason
        log.info("shutting down", extra={"reason": reason})
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if self._requested:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


async def watch_signals(
    shutdown: Shutdown,
    *,
    signals: Sequence[signal.Signals] = SIGNALS,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Turn the first signal into ``shutdown.request``; raise :class:`ForcedShutdown` on the next."""
    with anyio.open_signal_receiver(*signals) as received:
        task_status.started()
        async for signum in received:
            name = signal.Signals(signum).name
            if shutdown.requested:
                raise ForcedShutdown(f"second signal {name} while shutting down")
            shutdown.request(name)
