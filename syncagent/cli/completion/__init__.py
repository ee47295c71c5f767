"""``syncagent completion``: a shell completion script generated from the command line itself."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from syncagent.cli.lazy import lazy

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry

SHELLS = ("bash", "zsh", "fish")

DESCRIPTION = """\
Print a completion script for bash, zsh or fish, generated (by shtab) from this command's own
flags, so it never lags behind them. Load it in the current shell:

  bash:  source <(syncagent completion bash)
  zsh:   source <(syncagent completion zsh)
  fish:  syncagent completion fish | source

or save it where the shell loads completions (bash-completion's completions/ folder, a folder
of zsh's fpath as _syncagent, fish's ~/.config/fish/completions/syncagent.fish). The kubectl
plugin takes the same flags (kubectl syncagent ...)."""


def register(subparsers: Any, programs: Registry) -> None:
    parser = subparsers.add_parser(
        "completion",
        help="print a bash, zsh or fish completion script",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shell", choices=SHELLS)
    parser.set_defaults(func=lazy(f"{__name__}.shellscript"))
