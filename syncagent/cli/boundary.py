"""The CLI's one error boundary: every failure of a command becomes exit 1 and one line.

Input problems (``UserError`` and the typed errors of the layers below: unreadable or invalid
manifests, conversions, kubeconfigs, API calls) print ``error: <message>``, where the message
names the file or ``Kind/namespace/name`` and the field. Anything else is a bug in syncagent:
one line naming the exception plus a hint to rerun with ``--debug``, which prints the traceback
too. A bare traceback never reaches the user.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable

from syncagent.api.conversion import ConversionError
from syncagent.api.load import LoadError
from syncagent.api.schemacheck import MAX_DEPTH
from syncagent.cli.errors import UserError
from syncagent.runtime.client import ClientConfigError

EXPECTED: tuple[type[Exception], ...] = (UserError, LoadError, ConversionError, ClientConfigError)
DEBUG_FLAG = "--debug"


def one_line(text: str) -> str:
    return " ".join(text.split())


def run_command(
    func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace, *, debug: bool
) -> int:
    """``func(args)``'s exit code; 1 with one line on stderr for any exception."""
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except EXPECTED as err:
        _report(one_line(str(err)) or type(err).__name__, debug=debug)
    except RecursionError:
        _report(
            f"the input is nested too deeply to process; keep documents under {MAX_DEPTH} "
            "levels of nesting",
            debug=debug,
        )
    except Exception as err:  # the boundary: a bug must still end in one line
        detail = one_line(str(err))[:300]
        _report(
            f"internal error: {type(err).__name__}{': ' + detail if detail else ''}; this is a "
            f"bug in syncagent: rerun with {DEBUG_FLAG} for the traceback and report it",
            debug=debug,
        )
    return 1


def _report(message: str, *, debug: bool) -> None:
    if debug:
        traceback.print_exc(file=sys.stderr)
    print(f"error: {message}", file=sys.stderr)


def take_debug_flag(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` without ``--debug`` (accepted anywhere on the line, like kubectl's globals)."""
    rest = [a for a in argv if a != DEBUG_FLAG]
    return rest, len(rest) != len(argv)
