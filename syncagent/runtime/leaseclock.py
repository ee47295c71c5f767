"""The leadership clock: the one clock the Lease election and the write fence measure with.

``CLOCK_MONOTONIC`` stops while the machine is suspended, so a leader that slept through its
renew deadline would wake up believing it still leads, while a follower, whose clock counted
the sleep, has taken over. ``CLOCK_BOOTTIME`` (Linux) runs through suspend and, like the
monotonic clock, never jumps with the wall clock. Elsewhere there is no such clock and the
monotonic one is used (docs/runtime.md §1 says what that loses).
"""

from __future__ import annotations

import time

_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", None)


def now() -> float:
    """Seconds on the leadership clock (only differences mean anything)."""
    if _BOOTTIME is None:
        return time.monotonic()
    return time.clock_gettime(_BOOTTIME)
