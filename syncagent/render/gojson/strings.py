"""Go ``encoding/json``'s scalar output: strings (with its HTML escaping) and numbers."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

# Go escapes ", \, control characters, the HTML-sensitive <, > and & (json.Marshal's
# SetEscapeHTML default: a multinode launch command holds "&&"), U+2028 and U+2029.
_ESCAPED: Final = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029]')
_SHORT: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Go 1.22 and later write these two short forms too.
_SHORT |= {"\b": "\\b", "\f": "\\f"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def go_string(text: str) -> str:
    """``text`` as a Go JSON string (invalid UTF-8 cannot occur in a ``str``)."""
    return '"' + _ESCAPED.sub(_escape, text) + '"'


def go_float(value: float) -> str:
    """A float64 as Go's encoder writes it: shortest round-trip digits, ``e`` notation outside
    [1e-6, 1e21) with a two-digit exponent at least (``1e-07``, ``1e+21``)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"Go cannot encode the float {value!r} as JSON")
    magnitude = abs(value)
    if value == int(value) and magnitude < 1e21:
        return str(int(value))
    text = repr(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, _, exponent = text.partition("e")  # repr is in e notation out there
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").lstrip("0").rjust(2, "0")
        return f"{mantissa}e{sign}{digits}"
    if "e" in text:
        return format(Decimal(text), "f")
    return text
