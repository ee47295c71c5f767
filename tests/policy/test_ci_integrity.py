"""CI cannot pass by not running tests (issue 15, item 4): the checks on ``.ci/run`` and on what
the unit tier needs. The policy plugin itself is tested in ``test_ci_policy.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CI_RUN = (REPO / ".ci" / "run").read_text()
_NOT_TIERS = {"golden", "support", "__pycache__"}


def _commands() -> list[str]:
    return [
        ln.strip() for ln in CI_RUN.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]


def test_ci_clears_inherited_pytest_options_before_any_test_run():
    lines = _commands()
    unset = next(i for i, ln in enumerate(lines) if re.match(r"unset .*\bPYTEST_ADDOPTS\b", ln))
    first_pytest = next(i for i, ln in enumerate(lines) if "-m pytest" in ln)
    assert unset < first_pytest


def test_ci_runs_ruff_lint_and_format_check():
    lines = _commands()
    assert "python3 -m ruff check ." in lines
    assert "python3 -m ruff format --check ." in lines
    assert "lint-imports" in lines


def _arrays() -> dict[str, list[str]]:
    """The bash arrays ``.ci/run`` defines (``name=(a b`` … ``)``, on one line or several)."""
    found = re.finditer(r"^(\w+)=\(([^)]*)\)", CI_RUN, flags=re.M)
    return {m[1]: m[2].split() for m in found}


def _tier_runs() -> list[list[str]]:
    """The arguments of every ``tier NAME [PATH…]`` call, arrays expanded: each runs
    ``python3 -m pytest PATH…``."""
    arrays = _arrays()
    runs = []
    for ln in _commands():
        if re.match(r"tier \S", ln):
            words = ln.split()[1:]
            runs.append([w for word in words for w in _expand(word, arrays)])
    return runs


def _expand(word: str, arrays: dict[str, list[str]]) -> list[str]:
    m = re.fullmatch(r'"\$\{(\w+)\[@\]\}"', word)
    return arrays[m[1]] if m else [word]


def _covered(tier: str, runs: list[list[str]]) -> bool:
    """Whether the runs execute all of ``tests/<tier>``: by its path, or file by file."""
    if any(run[1:] == [f"tests/{tier}"] for run in runs):
        return True
    files = {f"tests/{tier}/{p.name}" for p in (REPO / "tests" / tier).glob("test_*.py")}
    run_files = {arg for run in runs for arg in run[1:]}
    return bool(files) and files <= run_files


def test_ci_runs_the_readme_command_and_every_other_tier_by_its_path():
    lines = _commands()
    readme = (REPO / "README.md").read_text()
    assert "python3 -m pytest\n" in readme  # the README's test command, as CI runs it
    runner = [ln for ln in lines if "python3 -m pytest" in ln]
    assert runner == [
        'SYNCAGENT_TEST_LOGS="$dir" python3 -m pytest "$@" 2>&1 | tee "$dir/pytest.out" || rc=$?'
    ]
    runs = _tier_runs()
    assert ["readme"] in runs  # the README's command: no path
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    in_readme = {Path(p).name for p in config["tool"]["pytest"]["ini_options"]["testpaths"]}
    tiers = {p.name for p in (REPO / "tests").iterdir() if p.is_dir()} - _NOT_TIERS
    for tier in sorted(tiers - in_readme):
        assert _covered(tier, runs), f"{tier} is not run (whole) by .ci/run"


def test_ci_fails_a_tier_the_policy_did_not_govern():
    """Each tier's output must end with the policy's line; an ungoverned run fails CI."""
    lines = _commands()
    assert "enforced=$(python3 -c 'from tests.ci_policy import ENFORCED; print(ENFORCED)')" in lines
    assert 'if [ "$rc" -eq 0 ] && ! grep -qxF "$enforced" "$dir/pytest.out"; then' in lines


def test_the_unit_tier_builds_and_downloads_nothing(tmp_path: Path):
    """Collecting the whole unit tier (where the conftest decides what to build) on a machine
    with an empty cache, no Go on PATH and the module proxy off: nothing is built or fetched."""
    bindir = Path(sys.executable).parent  # python and the console scripts; no Go
    assert shutil.which("go", path=str(bindir)) is None
    dirs = {name: tmp_path / name for name in ("home", "cache", "xdg", "gopath")}
    for d in dirs.values():
        d.mkdir()
    env = {
        "PATH": str(bindir),
        "HOME": str(dirs["home"]),
        "SYNCAGENT_CACHE": str(dirs["cache"]),
        "XDG_CACHE_HOME": str(dirs["xdg"]),
        "GOPATH": str(dirs["gopath"]),
        "GOPROXY": "off",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/unit",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = result.stdout + result.stderr
    collected = re.search(r"(\d+) tests? collected", out)
    assert collected, out[-3000:]
    assert int(collected.group(1)) > 100, out[-3000:]
    assert "binaries ready" not in out
    # A collect-only run executes nothing: the policy's one complaint, nothing else failed.
    failures = [ln for ln in out.splitlines() if "FAILED" in ln or "ERROR" in ln]
    assert failures == [
        "FAILED (ci policy): tier 'unit' executed no test; a run must execute every tier it "
        "asks for (check -m, -k and PYTEST_ADDOPTS)"
    ], out[-3000:]
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == [], f"the unit tier wrote into the caches: {left[:10]}"
