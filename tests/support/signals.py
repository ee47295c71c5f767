"""Children a test stops with Ctrl-C (SIGINT) start with SIGINT's default disposition.

A disposition of "ignored" is inherited across fork and exec: a run started in the background by
a non-interactive shell (``.ci/run &``) ignores SIGINT, and so would every command it starts,
which then never sees the interrupt a test sends (``status -w`` runs on). Python's
``subprocess`` restores SIGPIPE and SIGXFSZ only, and a ``preexec_fn`` is unsafe in a process
with threads, so the command is started through a tiny launcher that restores SIGINT's default
and then execs it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

_LAUNCHER = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])",
)


def with_default_sigint(argv: Sequence[str]) -> list[str]:
    """``argv`` run with SIGINT's default disposition, whatever this process inherited."""
    return [*_LAUNCHER, *argv]
