"""The cluster tier's pseudo-terminal (tests/cluster/support/terminal.py) and the SIGINT launcher
(tests/support/signals.py): a closed terminal has no reader left, and a command started from a
run that ignores SIGINT still stops at ^C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

from tests.cluster.support.terminal import Terminal
from tests.support.polling import eventually
from tests.support.signals import with_default_sigint

# What a background job of a non-interactive shell inherits: SIGINT ignored.
IGNORING = ("sh", "-c", 'trap "" INT; exec "$@"', "sh")
SHOW = (
    "import signal; h = signal.getsignal(signal.SIGINT); "
    "print({signal.SIG_IGN: 'ignored', signal.default_int_handler: 'default'}.get(h, h))"
)
SLEEP = "import time; print('sleeping', flush=True); time.sleep(60)"


def _disposition(argv: list[str]) -> str:
    done = subprocess.run(
        [*IGNORING, *argv], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


def test_a_child_of_a_run_ignoring_sigint_inherits_it():
    assert _disposition([sys.executable, "-c", SHOW]) == "ignored"


def test_the_launcher_gives_the_child_sigint_default_disposition():
    assert _disposition(with_default_sigint([sys.executable, "-c", SHOW])) == "default"


def test_interrupt_stops_a_terminal_started_by_a_run_that_ignores_sigint():
    inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as .ci/run started with "&"
    try:
        term = Terminal([sys.executable, "-c", SLEEP], env=dict(os.environ))
    finally:
        signal.signal(signal.SIGINT, inherited)
    with term:
        eventually(lambda: "sleeping" in term.output(), deadline=30, what="the command started")
        assert term.interrupt(timeout=10) == -signal.SIGINT


def test_close_ends_the_reader_while_a_descendant_holds_the_terminal():
    """A descendant in a session of its own survives the group kill and keeps the terminal open;
    close() must still end the reader before it closes the descriptor the reader reads."""
    script = 'setsid sleep 60 & echo "pid=$!"; wait'
    term = Terminal(["sh", "-c", script], env=dict(os.environ))
    found = eventually(
        lambda: re.search(r"pid=(\d+)", term.output()), deadline=30, what="the descendant's pid"
    )
    held = int(found.group(1))
    try:
        term.close()
        assert not term.reading
    finally:
        os.kill(held, signal.SIGKILL)
