"""A ``metav1.Duration`` as Go writes it: ``time.ParseDuration`` read, ``Duration.String()``
written (``"90s"`` is ``"1m30s"``, ``"1.5ms"`` stays, ``"0"`` is ``"0s"``)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

_PART: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_NANOS: Final = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9}
_NANOS |= {"m": 60 * 10**9, "h": 3600 * 10**9}


def go_duration(text: str) -> str:
    """``text`` (a Go duration string) as Go's ``Duration.String()`` writes it."""
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text.removeprefix("+"))
    if body == "0":
        return "0s"
    parts = _PART.findall(body)
    if (
        not parts
        or "".join(n + u for n, u in parts) != body
        or any(n in ("", ".") for n, _ in parts)
    ):
        raise ValueError(f"duration {text!r} is not a Go duration (e.g. 1m30s)")
    nanos = sum(int(Decimal(n) * _NANOS[u]) for n, u in parts)
    written = _format(nanos)
    return "-" + written if sign < 0 and nanos else written


def _fraction(value: int, digits: int) -> str:
    whole, rest = divmod(value, 10**digits)
    tail = str(rest).rjust(digits, "0").rstrip("0")
    return f"{whole}.{tail}" if tail else str(whole)


def _format(nanos: int) -> str:
    if nanos == 0:
        return "0s"
    if nanos < 1000:
        return f"{nanos}ns"
    if nanos < 10**6:
        return _fraction(nanos, 3) + "µs"
    if nanos < 10**9:
        return _fraction(nanos, 6) + "ms"
    seconds, fraction = divmod(nanos, 10**9)
    text = _fraction((seconds % 60) * 10**9 + fraction, 9) + "s"
    minutes = seconds // 60
    if minutes:
        text = f"{minutes % 60}m{text}"
    if minutes // 60:
        text = f"{minutes // 60}h{text}"
    return text
