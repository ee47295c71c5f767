"""A command run in a real pseudo-terminal, its output collected as it comes (no tests here).

The command sees a terminal on stdin, stdout and stderr (``isatty()`` is true), as when a user
types it; a thread reads the terminal's other end so the command never blocks on a full buffer.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence

# SIGINT's disposition is inherited across exec: a run started in the background by a
# non-interactive shell ignores it, and so would the command, which then never sees the ^C a
# test sends. The command is exec'd with the default disposition restored.
_WITH_SIGINT = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])",
)


class Terminal:
    def __init__(self, argv: Sequence[str], *, env: dict[str, str], columns: int = 200) -> None:
        main, side = pty.openpty()
        env = {**env, "COLUMNS": str(columns), "LINES": "60", "TERM": "xterm-256color"}
        self.proc = subprocess.Popen(
            [*_WITH_SIGINT, *argv],
            stdin=side,
            stdout=side,
            stderr=side,
            env=env,
            start_new_session=True,
        )
        os.close(side)
        self._main = main
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._main, 65536)
            except OSError:  # the command closed the terminal (EIO)
                return
            if not data:
                return
            with self._lock:
                self._chunks.append(data)

    def output(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")

    def wait(self, *, timeout: float = 60.0) -> int:
        """The exit code of a command that ends by itself."""
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        return code

    def interrupt(self, *, timeout: float = 30.0) -> int:
        """Ctrl-C, as a user stops ``-w``; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=10)
        os.close(self._main)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
