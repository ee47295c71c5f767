"""The command line behaves like a kubectl-style tool: version, help, one-line errors."""

from __future__ import annotations

import subprocess
import sys

from syncagent import __version__


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syncagent.cli.main", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"syncagent {__version__}"


def test_help_documents_exit_codes() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    assert "exit codes:" in proc.stdout


def test_dev_cluster_env_without_a_cluster_is_a_one_line_error(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "syncagent.cli.main", "dev-cluster", "--name", "absent", "env"],
        capture_output=True,
        text=True,
        check=False,
        env={"SYNCAGENT_CACHE": str(tmp_path), "PATH": ""},
    )
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("error: dev-cluster/absent: not running")


def test_usage_errors_exit_1_so_2_only_means_changes() -> None:
    proc = run("render", "-f", "-", "--no-such-flag")
    assert proc.returncode == 1
    assert "unrecognized arguments: --no-such-flag" in proc.stderr
