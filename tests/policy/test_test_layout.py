"""The unit tests mirror the code: ``tests/unit/<package>/`` holds the tests of
``syncagent/<package>/``, and a test module is never imported by another (what tests share lives
in a ``support`` package, where moving a test cannot break an import)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "tests" / "unit"
# Beside the product's packages: tests of the test support itself, of packaging/, and support.
NOT_PACKAGES = {"harness", "packaging", "support", "__pycache__"}
IMPORTS_A_TEST = re.compile(r"^\s*(from|import)\s+tests(\.\w+)*\.test_\w+", re.M)
# The recorded-rights run (tests/cluster/test_helm_rights.py) runs other modules' tests as its
# scenarios, by name; a private helper of a test module is no scenario and may move.
PRIVATE_OF_A_TEST = re.compile(r"\btest_\w+\._\w+")


def _packages() -> set[str]:
    return {p.parent.name for p in (REPO / "syncagent").glob("*/__init__.py")}


def test_every_unit_test_sits_in_the_folder_of_its_package():
    loose = sorted(p.name for p in UNIT.glob("test_*.py"))
    assert loose == [], (
        f"tests/unit/{loose[0]}: move it (git mv) into tests/unit/<package>/, the folder of the "
        "syncagent package it tests"
    )


def test_every_unit_folder_names_a_package_of_the_product():
    folders = {p.name for p in UNIT.iterdir() if p.is_dir()} - NOT_PACKAGES
    strays = sorted(folders - _packages())
    assert strays == [], (
        f"tests/unit/{strays[0]}/: no syncagent/{strays[0]}/ to mirror; name the folder after "
        "the package its tests cover"
    )


def test_no_test_module_imports_another():
    found = [
        f"{path.relative_to(REPO)}: {match.group(0).strip()}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        for match in IMPORTS_A_TEST.finditer(path.read_text())
    ]
    assert found == [], (
        f"{found[0]}: move what the tests share into a support module (tests/support/ or "
        "tests/<tier>/support/)"
    )


def test_no_module_reaches_into_a_test_modules_private_helpers():
    found = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        if path.name != "test_test_layout.py"
        for match in PRIVATE_OF_A_TEST.finditer(path.read_text())
    ]
    assert found == [], f"{found[0]}: use the helper from a support module instead"
