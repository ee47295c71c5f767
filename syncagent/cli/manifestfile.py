"""Reading the manifest a command is given (``-f FILE`` or ``-f -``): the CLI's only file input.

Parsing is :mod:`syncagent.api.load`'s (pure); this module does the I/O.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from syncagent.api.component import API_VERSION
from syncagent.api.load import LoadError, is_ours
from syncagent.api.schemas import unknown_field_warnings


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


def warn_unknown_fields(docs: list[dict[str, Any]]) -> None:
    """``warning: Kind/ns/name: <path>: unknown field ...`` on stderr for each v1beta1 DGD/DCD."""
    for doc in docs:
        if is_ours(doc) and doc.get("apiVersion") == API_VERSION:
            for line in unknown_field_warnings(doc):
                print(f"warning: {line}", file=sys.stderr)
