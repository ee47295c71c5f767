"""The figures the chaos tier prints (no tests here): each test adds lines, the terminal summary
prints them all, and ``$SYNCAGENT_CHAOS_FIGURES`` (a file) keeps a copy."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

_KEY = pytest.StashKey["Figures"]()


class Figures:
    def __init__(self) -> None:
        self.lines: list[str] = []

    @classmethod
    def of(cls, config: pytest.Config) -> Figures:
        if _KEY not in config.stash:
            config.stash[_KEY] = cls()
        return config.stash[_KEY]

    def add(self, line: str) -> None:
        stamped = f"{time.strftime('%H:%M:%S')} {line}"
        self.lines.append(stamped)
        out = os.environ.get("SYNCAGENT_CHAOS_FIGURES")
        if out:
            with Path(out).open("a") as f:
                f.write(stamped + "\n")

    def report(self, reporter: pytest.TerminalReporter) -> None:
        if not self.lines:
            return
        reporter.section("chaos figures")
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        reporter.write_line(
            f"load average at the end (1, 5, 15 min): {load}; cores: {os.cpu_count()}"
        )
        for line in self.lines:
            reporter.write_line(line)
