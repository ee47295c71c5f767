"""Go's ``time.ParseDuration``, the format of ``metav1.Duration`` in upstream's files."""

from __future__ import annotations

import re
from typing import Any

_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(value: Any) -> float:
    """``"1h30m"`` -> 5400.0 seconds; ``"0"`` is 0; a sign may lead; a bare number other than 0,
    or a number where a string belongs, is refused as Go refuses it."""
    if not isinstance(value, str):
        raise ValueError(f"expected a duration string such as 30s or 15m, not {value!r}")
    text = value
    sign = -1.0 if text.startswith("-") else 1.0
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    total, pos = 0.0, 0
    while pos < len(body):
        match = _TERM.match(body, pos)
        if match is None:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not body or pos != len(body):
        raise ValueError(f"invalid duration {value!r}: use Go's form, such as 30s, 15m or 1h30m")
    return sign * total
