"""Commands whose implementation is imported only when they run.

``syncagent --help``, ``syncagent render`` and every other command register all commands'
flags (each command package's ``__init__``); importing each implementation (the agent's
runtime, the inspect tools, the dev cluster) for that would make every invocation pay for all
of them.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable


def lazy(module: str, func: str = "run") -> Callable[[argparse.Namespace], int]:
    """``func`` of ``module`` (a module of a command package), imported at its first call."""

    def call(args: argparse.Namespace) -> int:
        found = importlib.import_module(module)
        return int(getattr(found, func)(args) or 0)

    # Named after the command (its package), as tracebacks and reprs show it.
    command = module.rsplit(".", 2)[-2]
    call.__qualname__ = call.__name__ = f"{command}.{func}"
    return call
