"""Exponential backoff with jitter, per key (work queue retries) or per loop (watch reconnects)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Backoff:
    """``base * 2**(failures-1)``, capped at ``cap``, then spread by ``±jitter`` (a fraction).

    Jitter keeps many keys that failed together (an API outage) from retrying in lockstep.
    """

    base: float = 0.1
    cap: float = 300.0
    jitter: float = 0.2
    rand: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.base <= 0 or self.cap < self.base:
            raise ValueError(f"backoff: need 0 < base <= cap, got base={self.base} cap={self.cap}")
        if not 0 <= self.jitter < 1:
            raise ValueError(f"backoff: jitter must be in [0, 1), got {self.jitter}")

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th consecutive failure (1 = first)."""
        if failures < 1:
            return 0.0
        # Cap the exponent first: 2**failures overflows float for long outages.
        exponent = min(failures - 1, 64)
        raw = min(self.cap, self.base * 2.0**exponent)
        spread = raw * self.jitter * (2.0 * self.rand() - 1.0)
        return max(0.0, min(self.cap, raw + spread))
