"""Entry point of the ``syncagent`` command.

Exit codes (every subcommand):
  0  success (``plan``: no changes)
  1  error: bad input, a usage error, unreachable cluster, a failed operation; one line on
     stderr says why
  2  ``plan``, ``conflicts``, ``managers``: there are changes, conflicts or findings
Usage errors exit 1, not argparse's 2, so that 2 keeps one meaning in scripts and CI.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from syncagent import __version__
from syncagent.cli.errors import UserError

# Each module exposes ``register(subparsers)`` and sets ``func`` on its parser.
SUBCOMMANDS: tuple[str, ...] = (
    "devcluster",
    "render",
    "convert",
    "crds",
    "run",
    "plan",
    "blame",
    "conflicts",
    "managers",
)

EPILOG = """exit codes:
  0  success (plan: no changes)
  1  error, including a command-line usage error; one line on stderr says what to do
  2  plan: changes would be made; conflicts/managers: conflicts or findings
"""


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on exit code 1 (2 means "changes" for ``plan``)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="syncagent",
        description="Keep NVIDIA Dynamo inference graphs deployed through server-side apply.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"syncagent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"syncagent.cli.{name.replace('-', '_')}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
