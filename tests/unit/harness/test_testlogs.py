"""A run that keeps its logs (``$SYNCAGENT_TEST_LOGS``, set by ``.ci/run``) keeps each agent's
log under its test's folder and hands a failed test the last lines of each."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import testlogs


def test_without_the_variable_logs_are_temporary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(testlogs.ENV, raising=False)
    log, kept = testlogs.agent_log()
    log.unlink()
    assert not kept
    assert testlogs.component_dir("control-plane") is None
    assert testlogs.agent_log_tails("tests/x.py::test_a") == []


def test_a_kept_log_lives_under_its_test_and_a_failure_reads_its_tail(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(testlogs.ENV, str(tmp_path))
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/chaos/test_x.py::test_a[cutover] (call)")
    first, kept = testlogs.agent_log()
    second, _ = testlogs.agent_log()
    assert kept
    assert first.parent == second.parent
    assert first.parent.is_relative_to(tmp_path / "tests")
    first.write_text("".join(f"line {i}\n" for i in range(100)))
    second.write_text("started\n")
    tails = testlogs.agent_log_tails("tests/chaos/test_x.py::test_a[cutover]")
    assert [title.split()[2] for title, _ in tails] == [str(first), str(second)]
    assert tails[0][1].splitlines() == [f"line {i}" for i in range(60, 100)]
    assert testlogs.agent_log_tails("tests/chaos/test_x.py::test_b") == []
    plane = testlogs.component_dir("control-plane")
    assert plane is not None
    assert plane.parent == tmp_path
