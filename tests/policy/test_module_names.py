"""No two modules (or packages) of ``syncagent/`` share a name without a reason the reader can
see (issue 42 item 3): a recurring name is listed here with its reason, so a new one fails until
it is renamed or its reason written down. Renaming one away needs no change here."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import syncagent

ROOT = Path(syncagent.__file__).parent

COMMAND = "a command package under cli/, named after its command"
PATHWAY = "one role in each pathway package"
PATHWAY_NAMED = "a pathway's package and its renderer, each named after the pathway"
LEAD = "to rename: in programs/, ssa/, api/ or render/, which other work is changing"
REASONS: dict[str, str] = {
    "crds": COMMAND,
    "plan": COMMAND,
    "render": COMMAND + "; a pathway's renderer, in its package (render/ is the shared part)",
    "status": COMMAND,
    "program": PATHWAY,
    "reconcile": PATHWAY,
    "routing": PATHWAY + "; programs/routing.py picks among them",
    "component": PATHWAY_NAMED,
    "field_managers": PATHWAY,
    "history": "to rename: the ownership history, being rewritten in one place",
    "kinds": "to rename: inspect/kinds.py is imported by the history's blame command",
    "cache": "to rename: runtime/cache.py is imported by programs/program.py",
    "errors": "to rename: cli/errors.py is imported by the history's blame command",
    **{
        name: LEAD
        for name in (
            "api",
            "base",
            "fights",
            "graph",
            "ownership",
            "workerhash",
        )
    },
}


def recurring_names(root: Path) -> dict[str, list[str]]:
    """Each name two or more modules or packages below ``root`` share, and where they are."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in root.rglob("*.py"):
        if path.name != "__init__.py":
            where[path.stem].append(str(path.relative_to(root)))
        elif path.parent != root:
            where[path.parent.name].append(str(path.parent.relative_to(root)) + "/")
    return {name: sorted(places) for name, places in where.items() if len(places) > 1}


def test_every_recurring_module_name_has_a_reason() -> None:
    unexplained = {n: p for n, p in recurring_names(ROOT).items() if n not in REASONS}
    assert unexplained == {}


def test_the_check_sees_a_shared_name(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
        (tmp_path / folder / "status.py").write_text("")
    assert recurring_names(tmp_path) == {"status": ["a/status.py", "b/status.py"]}
