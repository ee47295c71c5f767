"""The independence contract over the pathway packages (pyproject.toml) names the registry's
pathways: a shipped pathway whose package the contract misses could import another unnoticed."""

from __future__ import annotations

import tomllib
from pathlib import Path

from syncagent.cli.pathways import PROGRAMS
from syncagent.programs.registry import Registry

REPO = Path(__file__).resolve().parents[2]
PREFIX = "syncagent.programs."


def contract_modules() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    return set(next(c for c in contracts if c["id"] == "pathways-independent")["modules"])


def pathway_packages(programs: Registry) -> set[str]:
    """The package under ``syncagent.programs`` of each program the registry holds."""
    modules = (type(p.functions).__module__ for p in programs.programs)
    return {PREFIX + m.removeprefix(PREFIX).split(".")[0] for m in modules if m.startswith(PREFIX)}


def test_the_independence_contract_names_each_registered_pathway_package():
    assert len(pathway_packages(PROGRAMS)) == len(PROGRAMS.programs)
    assert contract_modules() == pathway_packages(PROGRAMS)
