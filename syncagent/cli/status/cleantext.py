"""Strings from the cluster made safe to print on a terminal (docs/bad-input.md).

Anyone who can create an Event, or name an object, in a namespace chooses text that
``syncagent status`` prints to whoever reads that namespace. Escape sequences in it could move
the cursor, rewrite the screen or the window title, plant a hyperlink (OSC 8) or write to the
clipboard (OSC 52); bidi controls reorder what the reader sees. What is removed: whole ESC
sequences (CSI, OSC, DCS, SOS, PM, APC and two-character ones) and their 8-bit C1 forms, then
every remaining C0/C1 control and DEL, every Unicode bidi control, and lone surrogates.
Line breaks and tabs become a space: each string is shown on one line.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

_ST = r"(?:\x1b\\|\x07|\x9c)"  # string terminator: ESC \, BEL (xterm), 8-bit ST
_SEQUENCES = re.compile(
    "|".join(
        (
            r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?",  # CSI: parameters, intermediates, final
            rf"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*{_ST}?",  # OSC/DCS/SOS/PM/APC
            r"\x1b[ -/]*[0-~]?",  # any other escape: intermediates and a final byte
        )
    )
)
_SPACES = re.compile(r"[\t\n\v\f\r\x85\u2028\u2029]")
# C0 and C1 controls and DEL, the bidi controls (Unicode's Bidi_Control property) and
# surrogates, which no terminal shows as text.
_CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def clean(text: str) -> str:
    """``text`` without escape sequences or terminal-affecting characters, on one line."""
    return _CONTROLS.sub("", _SPACES.sub(" ", _SEQUENCES.sub("", text)))


def cleaned(value: Any) -> Any:
    """A copy of ``value`` (strings, lists, dicts, dataclasses) with every string cleaned."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list | tuple):
        return type(value)(cleaned(v) for v in value)
    if isinstance(value, dict):
        return {cleaned(k): cleaned(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: cleaned(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value
