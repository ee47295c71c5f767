"""Child processes that cannot outlive whoever started them."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    # The kernel sends SIGKILL to the child when the parent dies, however it dies (SIGKILL
    # included), so an interrupted test run never leaves etcd or the API server behind.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # Own process group, so a terminal's Ctrl-C reaches only the parent, which stops us in order.
    os.setpgid(0, 0)


def spawn(
    cmd: list[str], *, log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            preexec_fn=die_with_parent,
        )


def stop(proc: subprocess.Popen[bytes], *, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; always reaps the child."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
