"""The command line run in-process, as the console script runs it (no tests here)."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path

from syncagent.cli.main import main

BINARY = Path(sys.executable).with_name("syncagent")  # the console script pip installed


@contextlib.contextmanager
def _stdin(text: str) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


def run_cli(argv: list[str], text: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with _stdin(text), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's usage errors; the console script does the same
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()
