"""A command run in a real pseudo-terminal, its output collected as it comes (no tests here).

The command sees a terminal on stdin, stdout and stderr (``isatty()`` is true), as when a user
types it; a thread reads the terminal's other end so the command never blocks on a full buffer.
"""

from __future__ import annotations

import contextlib
import os
import pty
import selectors
import signal
import subprocess
import threading
from collections.abc import Sequence

from tests.support.signals import with_default_sigint

_READER_DEADLINE = 10.0


class Terminal:
    def __init__(self, argv: Sequence[str], *, env: dict[str, str], columns: int = 200) -> None:
        main, side = pty.openpty()
        env = {**env, "COLUMNS": str(columns), "LINES": "60", "TERM": "xterm-256color"}
        # The test stops ``-w`` with ^C, as a user does (tests/support/signals.py).
        self.proc = subprocess.Popen(
            with_default_sigint(argv),
            stdin=side,
            stdout=side,
            stderr=side,
            env=env,
            start_new_session=True,
        )
        os.close(side)
        self._main = main
        # close() wakes the reader through this pipe: a descendant of the command may hold the
        # terminal open, so the terminal alone may never tell the reader to stop.
        self._wake_read, self._wake_write = os.pipe()
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._main, selectors.EVENT_READ)
            selector.register(self._wake_read, selectors.EVENT_READ)
            while True:
                ready = {key.fd for key, _ in selector.select()}
                if self._main in ready and not self._take():
                    return
                if self._wake_read in ready:
                    return

    def _take(self) -> bool:
        """One read of the terminal; False once the command's side is closed."""
        try:
            data = os.read(self._main, 65536)
        except OSError:  # every holder of the other side closed it (EIO)
            return False
        if data:
            with self._lock:
                self._chunks.append(data)
        return bool(data)

    @property
    def reading(self) -> bool:
        return self._reader.is_alive()

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
        """Ends the command's process group and the reader, then closes the descriptors.

        A descriptor is closed only once the reader has ended: its number may be reused at once
        (by the test's next connection to the API server, say), and a reader still in
        ``os.read`` would then take that socket's bytes.
        """
        if self.proc.returncode is None:
            # Not reaped yet, so its pid, the group's id, cannot have been reused.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.write(self._wake_write, b"\0")
        self._reader.join(timeout=_READER_DEADLINE)
        if self._reader.is_alive():
            raise AssertionError(
                f"the terminal's reader of {self.proc.args!r} did not end within "
                f"{_READER_DEADLINE:.0f} s; its descriptors are left open rather than reused"
            )
        for fd in (self._main, self._wake_read, self._wake_write):
            os.close(fd)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
