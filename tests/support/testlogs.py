"""Where a run keeps its logs, so that a failure explains itself (no tests here).

``$SYNCAGENT_TEST_LOGS`` (``.ci/run`` sets it per tier) names a folder. When it is set, every
control plane and simulated cluster keeps its files (each component's log) in a folder of its
own under it, and every agent writes its log under the folder of the test that started it
(``tests/<node id>/``) and never deletes it. A failed test's report then carries the last lines
of each of its agents' logs, with their paths. Unset, logs are temporary files, removed after use.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

ENV = "SYNCAGENT_TEST_LOGS"
TAIL_LINES = 40


def root() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value else None


def component_dir(name: str) -> Path | None:
    """A fresh folder for one control plane's files, or None (a temporary one is used)."""
    base = root()
    if base is None:
        return None
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=base))


def _test_dir(base: Path, nodeid: str) -> Path:
    return base / "tests" / re.sub(r"[^\w.-]+", "_", nodeid).strip("_")


def current_test() -> str:
    """The running test's node id (pytest keeps it in the environment while a test runs)."""
    return os.environ.get("PYTEST_CURRENT_TEST", "outside-a-test").rsplit(" ", 1)[0]


def agent_log() -> tuple[Path, bool]:
    """A new file for an agent's log, and whether it is kept after the agent stops."""
    kept = kept_file("agent")
    if kept is None:
        return Path(tempfile.mkstemp(prefix="agent-", suffix=".log")[1]), False
    return kept, True


def kept_file(prefix: str) -> Path | None:
    """A new ``<prefix>-*.log`` in the running test's folder, or None when logs are not kept."""
    base = root()
    if base is None:
        return None
    folder = _test_dir(base, current_test())
    folder.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkstemp(prefix=f"{prefix}-", suffix=".log", dir=folder)[1])


def agent_log_tails(nodeid: str) -> list[tuple[str, str]]:
    """``(title, last lines)`` of every agent log kept for the test ``nodeid``, oldest first."""
    base = root()
    if base is None:
        return []
    logs = sorted(_test_dir(base, nodeid).glob("agent-*.log"), key=lambda p: p.stat().st_mtime)
    tails = []
    for log in logs:
        lines = log.read_text(errors="replace").splitlines()[-TAIL_LINES:]
        tails.append((f"agent log {log} (last {len(lines)} lines)", "\n".join(lines)))
    return tails
