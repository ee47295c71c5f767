"""The agent process as the kernel and the event loop see it (Linux's /proc): what the process
gauges report (runtime/metrics.py), 0 where it cannot be read."""

from __future__ import annotations

import asyncio
import os
import resource

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
