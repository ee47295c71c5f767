"""The agent process as the kernel and the event loop see it (Linux's /proc): what the process
gauges report (runtime/metrics.py), 0 where it cannot be read."""

from __future__ import annotations

import asyncio
import os
import resource
from collections.abc import Callable

from syncagent.runtime.metrics import Registry


class ProcessMetrics:
    """What a long run could leak (bench/soak.py samples them), measured at scrape time."""

    def __init__(self, r: Registry) -> None:
        self.resident_memory = r.gauge(
            "syncagent_process_resident_memory_bytes", "Resident memory of the agent process."
        )
        self.open_fds = r.gauge("syncagent_process_open_fds", "Open file descriptors.")
        self.tasks = r.gauge("syncagent_asyncio_tasks", "asyncio tasks of the event loop.")
        self.memo_entries = r.gauge(
            "syncagent_memo_entries",
            "Entries of an in-memory table other than the watch caches (convergence: the apply "
            "engine's convergence records; events: Events remembered for aggregation; fights: "
            "tracked field fights; latency: graph generations waiting for a status write).",
            ("memo",),
        )
        self._memos: dict[str, Callable[[], int]] = {}
        r.collectors.append(self._collect)

    def measure_memo(self, memo: str, size: Callable[[], int]) -> None:
        """Report ``size()`` as ``syncagent_memo_entries{memo=...}`` at each scrape."""
        self._memos[memo] = size

    def _collect(self) -> None:
        self.resident_memory.set(resident_bytes())
        self.open_fds.set(open_fds())
        self.tasks.set(asyncio_tasks())
        for memo, size in list(self._memos.items()):
            self.memo_entries.set(size(), memo=memo)


_PAGE = resource.getpagesize()


def resident_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def asyncio_tasks() -> int:
    """The running loop's unfinished tasks (0 outside a loop: the scrape runs inside it)."""
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:
        return 0


def raise_fd_limit() -> int:
    """Lift the soft limit on open files to the hard one (as Go's runtime does at start) and
    return it: a soft limit of 1024 is less than 500 flooding connections on each of three
    ports need while they wait out the header deadline."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            return soft
    return hard
