"""Commands whose implementation is imported only when they run.

``syncagent --help``, ``syncagent render`` and every other command register all subcommands'
flags; importing each implementation (the agent's runtime, the inspect tools, the dev cluster)
for that would make every invocation pay for all of them.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable


def lazy(command: str, func: str = "run") -> Callable[[argparse.Namespace], int]:
    """``func`` of :mod:`syncagent.cli.commands.<command>`, imported at its first call."""

    def call(args: argparse.Namespace) -> int:
        module = importlib.import_module(f"syncagent.cli.commands.{command}")
        return int(getattr(module, func)(args) or 0)

    call.__qualname__ = call.__name__ = f"{command}.{func}"
    return call
