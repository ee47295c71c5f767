"""Entry point of the ``syncagent`` command.

Exit codes (every subcommand):
  0  success (``plan``: no changes; ``status``: the tree was printed, ready or not)
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
from syncagent.cli import boundary
from syncagent.cli.pathways import PROGRAMS
from syncagent.programs.registry import Registry

# The command table: each command as typed, and the package that is the whole command (its
# flags in the package's ``register(subparsers, programs)``, which sets ``func`` on its parser;
# what it does and prints in the package's other modules, imported only when it runs). In
# ``--help`` order; adding a command is its package plus one row here.
COMMANDS: dict[str, str] = {
    "dev-cluster": "syncagent.cli.dev_cluster",
    "render": "syncagent.cli.render",
    "convert": "syncagent.cli.convert",
    "crds": "syncagent.cli.crds",
    "run": "syncagent.cli.run",
    "plan": "syncagent.cli.plan",
    "blame": "syncagent.cli.blame",
    "conflicts": "syncagent.cli.conflicts",
    "managers": "syncagent.cli.managers",
    "status": "syncagent.cli.status",
    "completion": "syncagent.cli.completion",
}

EPILOG = """exit codes:
  0  success (plan: no changes)
  1  error, including a command-line usage error; one line on stderr says what to do
  2  plan: changes would be made; conflicts/managers: conflicts or findings
"""


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on exit code 1 (2 means "changes" for ``plan``)."""

    def error(self, message: str) -> NoReturn:
        # One line, like every other error; the usage is one --help away.
        self.exit(1, f"error: {self.prog}: {message}; see {self.prog} --help\n")


def build_parser(
    programs: Registry, *, prog: str = "syncagent", commands: Sequence[str] = tuple(COMMANDS)
) -> argparse.ArgumentParser:
    """Every command's flags; ``programs`` (the pathways) reaches each command as
    ``args.programs``. The kubectl plugin builds it with its own name and the inspect commands
    only (``cli/plugin.py``)."""
    parser = Parser(
        prog=prog,
        description="Keep NVIDIA Dynamo inference graphs deployed through server-side apply.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"syncagent {__version__}")
    parser.add_argument(
        boundary.DEBUG_FLAG,
        action="store_true",
        help="on an internal error, print the traceback too (accepted anywhere on the line)",
    )
    parser.set_defaults(programs=programs)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands:
        importlib.import_module(COMMANDS[name]).register(sub, programs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``syncagent``: the commands over the pathways of :mod:`syncagent.cli.pathways`."""
    return run_cli(list(sys.argv[1:] if argv is None else argv), programs=PROGRAMS)


def run_cli(
    argv: Sequence[str],
    *,
    programs: Registry,
    prog: str = "syncagent",
    commands: Sequence[str] = tuple(COMMANDS),
) -> int:
    """The commands over ``programs``: the composition root (a test plugs in a pathway; the
    kubectl plugin names itself and offers the inspect commands)."""
    args_in, debug = boundary.take_debug_flag(list(argv))
    parser = build_parser(programs, prog=prog, commands=commands)
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_usage(sys.stderr)
        parser.error("a command is required")
    return boundary.run_command(args.func, args, debug=debug)


if __name__ == "__main__":
    sys.exit(main())
