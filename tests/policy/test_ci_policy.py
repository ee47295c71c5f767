"""The CI policy (``tests/ci_policy.py``) fails every run that did not really test.

Each case runs pytest in a subprocess on a small project of two tiers, with the policy loaded as
a plugin, exactly as this repository's ``tests/conftest.py`` loads it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ci_policy import ENFORCED

TESTS = Path(__file__).resolve().parents[1]
PASSING = "def test_ok():\n    assert True\n"
CONFIG = "[pytest]\ntestpaths = tests/unit tests/cluster\nmarkers =\n    cluster: c\n"


def run(project: Path, *args: str, addopts: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(TESTS)
    if addopts:
        env["PYTEST_ADDOPTS"] = addopts
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ci_policy", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text(CONFIG)
    for tier, body in (("unit", PASSING), ("cluster", "import pytest\n\n" + _marked(PASSING))):
        (tmp_path / "tests" / tier).mkdir(parents=True)
        (tmp_path / "tests" / tier / f"test_{tier}.py").write_text(body)
    return tmp_path


def _marked(body: str) -> str:
    return "@pytest.mark.cluster\n" + body


def test_a_run_that_executes_every_tier_passes(project: Path) -> None:
    result = run(project)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(
    "skip",
    [
        "import pytest\npytest.skip('no', allow_module_level=True)\n",
        "import pytest\npytest.importorskip('no_such_module_anywhere')\n",
        "import pytest\n\n@pytest.mark.skip\nclass TestX:\n    def test_a(self):\n        pass\n",
        "import pytest\n\n@pytest.mark.xfail\ndef test_a():\n    assert False\n",
        "import pytest\n\ndef test_a():\n    pytest.skip('later')\n",
    ],
    ids=["module", "importorskip", "class", "xfail", "test"],
)
def test_a_skip_at_any_level_fails_the_run(project: Path, skip: str) -> None:
    (project / "tests" / "unit" / "test_skip.py").write_text(skip)
    result = run(project)
    assert result.returncode == 1, result.stdout
    assert "counts as a failure here" in result.stdout


def test_deselecting_a_tier_through_inherited_addopts_fails(project: Path) -> None:
    result = run(project, addopts="-m 'not cluster'")
    assert result.returncode == 1, result.stdout
    assert "tier 'cluster' executed no test" in result.stdout


def test_an_explicit_tier_that_executes_nothing_fails(project: Path) -> None:
    (project / "tests" / "parity").mkdir()
    (project / "tests" / "parity" / "test_p.py").write_text(PASSING)
    assert run(project, "tests/parity").returncode == 0
    result = run(project, "tests/parity", "-k", "nothing_matches_this")
    assert result.returncode != 0, result.stdout


def test_a_collection_warning_fails_the_run(project: Path) -> None:
    (project / "tests" / "unit" / "test_warn.py").write_text(
        "class TestWithInit:\n    def __init__(self):\n        pass\n\n    def test_a(self):\n"
        "        pass\n"
    )
    result = run(project)
    assert result.returncode == 1, result.stdout
    assert "warning at collection" in result.stdout


def test_an_xpass_fails_the_run(project: Path) -> None:
    (project / "tests" / "unit" / "test_xpass.py").write_text(
        "import pytest\n\n@pytest.mark.xfail(reason='fixed since')\ndef test_a():\n    pass\n"
    )
    result = run(project)
    assert result.returncode == 1, result.stdout
    assert "test_a (xpassed)" in result.stdout


def test_the_policy_cannot_be_switched_off(project: Path) -> None:
    (project / "tests" / "unit" / "test_skip.py").write_text(
        "import pytest\n\ndef test_a():\n    pytest.skip('later')\n"
    )
    result = run(project, "-p", "no:syncagent-ci-policy")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "the CI policy cannot be switched off" in result.stderr


def test_every_governed_run_says_so_for_ci_to_check(project: Path) -> None:
    """``.ci/run`` fails a tier whose output lacks the line (the policy was never loaded)."""
    assert ENFORCED in run(project).stdout.splitlines()
    assert ENFORCED in run(project, "-k", "nothing_matches_this").stdout.splitlines()
    bare = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert ENFORCED not in bare.stdout


def test_this_repository_loads_the_policy() -> None:
    conftest = (TESTS / "conftest.py").read_text()
    assert "from tests.ci_policy import pytest_configure" in conftest
