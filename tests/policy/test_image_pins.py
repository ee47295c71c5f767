"""The image's name, version and contents have one source each; the copies must not drift.

``syncagent.__version__`` is the version: the chart's appVersion (which the default image tag
follows) and the Containerfile's VERSION copy it; ``packaging/build-image`` names the archive and
labels the image from it at build time. The chart's values name the repository build-image tags.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from packaging.requirements import Requirement

import syncagent

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "syncagent"
CONTAINERFILE = (REPO / "packaging" / "Containerfile").read_text()
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


@pytest.fixture
def build_image(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    path = REPO / "packaging" / "build-image"
    loader = importlib.machinery.SourceFileLoader("build_image", str(path))
    spec = importlib.util.spec_from_loader("build_image", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    # Registered first: its dataclasses resolve their annotations through sys.modules.
    monkeypatch.setitem(sys.modules, "build_image", module)
    loader.exec_module(module)
    return module


def test_chart_app_version_is_the_package_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["appVersion"] == syncagent.__version__, (
        "helm/syncagent/Chart.yaml appVersion: set it to syncagent.__version__ "
        f"({syncagent.__version__}); the default image tag follows it"
    )


def test_chart_default_image_is_the_one_build_image_tags(build_image: ModuleType) -> None:
    image = yaml.safe_load((CHART / "values.yaml").read_text())["image"]
    assert image["repository"] == build_image.IMAGE_REPOSITORY
    # Empty: the tag is the appVersion, so it moves with the package version.
    assert (image["tag"], image["digest"]) == ("", "")


def test_containerfile_version_source_and_licence_are_the_project_s() -> None:
    assert f"ARG VERSION={syncagent.__version__}\n" in CONTAINERFILE
    labels = dict(re.findall(r'(org\.opencontainers\.image\.\w+)="([^"]*)"', CONTAINERFILE))
    assert labels["org.opencontainers.image.source"] == PROJECT["urls"]["Source"]
    assert labels["org.opencontainers.image.licenses"] == PROJECT["license"]["text"]
    assert labels["org.opencontainers.image.description"] == PROJECT["description"]


def test_containerfile_config_is_build_image_s(build_image: ModuleType) -> None:
    uid = build_image.USER[0]
    assert f"\nUSER {uid}:{uid}\n" in CONTAINERFILE
    assert '\nENTRYPOINT ["syncagent"]\n' in CONTAINERFILE
    env = re.search(r"\nENV ((?:.*\\\n)*.*)\n", CONTAINERFILE)
    assert env is not None
    assigned = [part.strip(" \\") for part in env.group(1).split("\n")]
    assert tuple(assigned) == build_image.IMAGE_ENV


def _locked(path: Path) -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", path.read_text(), re.MULTILINE)
    return {name.lower().replace("_", "-"): version for name, version in pins}


LOCKS = REPO / "packaging"
RUNTIME_LOCK = LOCKS / "requirements.lock"
TEST_LOCK = LOCKS / "test-requirements.lock"


def _regenerate(lock: Path) -> str:
    """The command that wrote ``lock``, from its header (packaging/README.md lists them)."""
    command = re.search(r"^#\s+(uv pip compile .*)$", lock.read_text(), re.MULTILINE)
    assert command is not None, f"{lock.name}: no 'uv pip compile' command in its header"
    return f"regenerate it: pip install uv && {command.group(1)}"


def _check_ranges(lock: Path, specs: list[str]) -> None:
    locked = _locked(lock)
    for spec in specs:
        requirement = Requirement(spec)
        name = requirement.name.lower().replace("_", "-")
        where = f"packaging/{lock.name}"
        assert name in locked, f"{where}: {name} is missing; {_regenerate(lock)}"
        assert requirement.specifier.contains(locked[name]), (
            f"{where}: {name}=={locked[name]} is outside {spec}; {_regenerate(lock)}"
        )


def test_lock_pins_every_dependency_within_its_range() -> None:
    _check_ranges(RUNTIME_LOCK, PROJECT["dependencies"])


def test_test_lock_pins_every_dependency_and_test_tool_within_its_range() -> None:
    _check_ranges(TEST_LOCK, PROJECT["dependencies"] + PROJECT["optional-dependencies"]["test"])


def test_test_lock_pins_what_it_shares_with_the_image_s_lock_at_the_same_version() -> None:
    # CI installs both: a package the two pin differently would leave the tests running a
    # version the image does not.
    runtime, test = _locked(RUNTIME_LOCK), _locked(TEST_LOCK)
    differ = {n: (v, test[n]) for n, v in runtime.items() if n in test and test[n] != v}
    assert not differ, f"packaging/test-requirements.lock pins {differ}; {_regenerate(TEST_LOCK)}"


def test_ci_installs_the_locks_with_hashes_and_the_project_without_dependencies() -> None:
    run = (REPO / ".ci" / "run").read_text()
    installs = re.findall(r"^pip_install (.*)$", run, re.MULTILINE)
    assert installs == [
        "--no-deps --require-hashes -r packaging/requirements.lock",
        "--no-deps --require-hashes -r packaging/test-requirements.lock",
        "--no-deps -e .",
    ]
    assert "\npython3 -m pip check\n" in run


def test_every_pin_carries_a_hash() -> None:
    for lock in ("requirements.lock", "test-requirements.lock", "tools.lock"):
        text = (REPO / "packaging" / lock).read_text()
        blocks = re.findall(
            r"^[A-Za-z0-9_.-]+==\S+ \\\n((?:\s+--hash=sha256:\w+.*\n)+)", text, re.M
        )
        assert len(blocks) == len(_locked(REPO / "packaging" / lock)) > 0, lock
