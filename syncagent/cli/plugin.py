"""``kubectl-syncagent``: the inspect commands as a kubectl plugin (``kubectl syncagent ...``).

kubectl runs an executable named ``kubectl-<name>`` found on PATH for ``kubectl <name>``, with
the arguments after ``<name>``; it refuses flags placed before the plugin's name, so kubectl's
global flags (``--kubeconfig``, ``--context``, ``-n``, ``--as``) come after it, and users put them
anywhere: before the subcommand (``kubectl syncagent -n ns status g``) as kubectl allows, or
after it. Those before it are moved after it, where each inspect command declares them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from syncagent.cli.main import run_cli
from syncagent.cli.pathways import PROGRAMS

# The inspect commands: rows of the command table (``cli.main.COMMANDS``).
COMMANDS: tuple[str, ...] = ("plan", "blame", "conflicts", "managers", "status")
PROG = "kubectl syncagent"
# kubectl's global flags the inspect commands take, each followed by a value.
GLOBAL_FLAGS = frozenset({"--kubeconfig", "--context", "-n", "--namespace", "--as", "--as-group"})


def hoist(argv: Sequence[str]) -> list[str]:
    """``-n ns status g`` -> ``status -n ns g``: global flags before the command go after it."""
    rest = list(argv)
    moved: list[str] = []
    while rest and rest[0] not in COMMANDS:
        width = _global_flag_width(rest[0])
        if not width:
            return list(argv)  # --help, --version, a typo: argparse reports it
        moved, rest = moved + rest[:width], rest[width:]
    return [*rest[:1], *moved, *rest[1:]] if rest else list(argv)


def _global_flag_width(arg: str) -> int:
    """How many words a global flag takes (``--context=c`` and ``-nns`` one, ``-n ns`` two);
    0 for anything else."""
    if arg.startswith("-n") and not arg.startswith("--"):
        return 2 if arg == "-n" else 1
    name, eq, _ = arg.partition("=")
    if name not in GLOBAL_FLAGS:
        return 0
    return 1 if eq else 2


def main(argv: Sequence[str] | None = None) -> int:
    args = hoist(sys.argv[1:] if argv is None else argv)
    return run_cli(args, programs=PROGRAMS, prog=PROG, commands=COMMANDS)


if __name__ == "__main__":
    sys.exit(main())
