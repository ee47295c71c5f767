"""The run-wide test policy: a run that did not really test fails.

Loaded by ``tests/conftest.py`` (and by its own unit tests as ``-p ci_policy``). Every tier is a
folder under ``tests/``. A run fails when:

- anything was skipped, xfailed or xpassed, at any level (a module-level ``pytest.skip``, an
  ``importorskip``, a skipped class, a skip marker, an ``xfail`` marker whether its test fails
  or passes);
- a tier the run asked for executed no test: ``pytest`` asks for the ``testpaths`` tiers,
  ``pytest tests/parity`` for ``parity``; so deselecting with ``-m``/``-k`` or an inherited
  ``PYTEST_ADDOPTS`` cannot pass with zero tests of a tier;
- collection emitted a warning (a test class with ``__init__``, a bad ``pytest.mark``, …).

The policy cannot be switched off: ``-p no:syncagent-ci-policy`` is a usage error. Every run it
governs ends with the line :data:`ENFORCED`, which ``.ci/run`` looks for after each tier, so a
run in which it was not loaded at all (another conftest, ``--noconftest``) fails CI too.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

_NOT_TIERS = frozenset({"golden", "support", "__pycache__"})
NAME = "syncagent-ci-policy"
ENFORCED = "ci policy: enforced"


def tier_of(nodeid: str) -> str | None:
    """``tests/<tier>/…`` → ``<tier>`` (node ids are relative to the rootdir)."""
    parts = nodeid.split("::", 1)[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else None


class Policy:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.skipped: list[str] = []
        self.executed: Counter[str] = Counter()
        self.collect_warnings: list[str] = []

    def requested_tiers(self) -> set[str]:
        """The tiers named by the command line, or by ``testpaths`` when it names none."""
        tests = self.config.rootpath / "tests"
        tiers: set[str] = set()
        for arg in self.config.args:
            path = Path(arg.split("::", 1)[0])
            path = (
                path if path.is_absolute() else self.config.invocation_params.dir / path
            ).resolve()
            if path == tests:
                tiers |= {p.name for p in tests.iterdir() if p.is_dir()} - _NOT_TIERS
            elif tests in path.parents:
                tiers.add(path.relative_to(tests).parts[0])
        return tiers

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.skipped:
            self.skipped.append(f"{report.nodeid or '<session>'} (at collection)")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped:
            self.skipped.append(report.nodeid)
        elif hasattr(report, "wasxfail"):
            # An XPASS: a test marked to fail passed, so the marker no longer says what it does.
            self.skipped.append(f"{report.nodeid} (xpassed)")
        elif report.when == "call":
            self.executed[tier_of(report.nodeid) or "?"] += 1

    def pytest_warning_recorded(
        self, warning_message: object, when: str, nodeid: str, location: object
    ) -> None:
        if when == "collect":
            self.collect_warnings.append(f"{nodeid or location}: {warning_message}")

    def problems(self) -> list[str]:
        found = []
        if self.skipped:
            found.append(
                f"{len(self.skipped)} skipped, xfailed or xpassed (each counts as a failure "
                "here): " + ", ".join(self.skipped[:5])
            )
        for tier in sorted(self.requested_tiers()):
            if self.executed[tier] == 0:
                found.append(
                    f"tier {tier!r} executed no test; a run must execute every tier it asks for "
                    "(check -m, -k and PYTEST_ADDOPTS)"
                )
        found += [f"warning at collection: {w}" for w in self.collect_warnings]
        return found

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus == 0 and self.problems():
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        for line in self.problems():
            terminalreporter.write_line(f"FAILED (ci policy): {line}", red=True)
        terminalreporter.write_line(ENFORCED)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.is_blocked(NAME):
        raise pytest.UsageError(f"-p no:{NAME}: the CI policy cannot be switched off")
    config.pluginmanager.register(Policy(config), NAME)
