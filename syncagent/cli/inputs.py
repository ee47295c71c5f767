"""Reading the manifest a command is given (``-f FILE`` or ``-f -``): the CLI's only file input.

Parsing is :mod:`syncagent.api.load`'s (pure); this module does the I/O.
"""

from __future__ import annotations

import sys
from pathlib import Path

from syncagent.api.load import LoadError


def read_input(path: str) -> str:
    """The text of ``path``, or of stdin for ``-``."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise LoadError(f"{path}: cannot read: {err}") from None
