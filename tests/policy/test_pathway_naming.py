"""Shared modules do not name a pathway (issue 42 item 1): what is particular to a pathway
lives in its package (``syncagent/programs/<pathway>/``), so adding or changing one touches its
package and the registry line only.

Shared: the modules of ``syncagent/programs`` outside the pathway packages, and
``syncagent/controller``. A pathway is named by an identifier, an import or a string (not a
docstring or comment: those may point at a pathway's documentation) that contains the
pathway's ``name`` or ``pathway`` value, or by importing its package. The fallback pathway's
words are Dynamo's word for a graph part (``Component``), which every module uses, so it is held
to the import rule alone.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncagent.cli.pathways import PROGRAMS

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {type(p.functions).__module__.rsplit(".", 1)[0] for p in PROGRAMS.programs}


def shared_modules() -> list[Path]:
    programs = sorted((ROOT / "syncagent/programs").glob("*.py"))
    controller = sorted((ROOT / "syncagent/controller").glob("*.py"))
    return programs + controller


def words() -> set[str]:
    """The non-fallback pathways' names, lower case and without underscores."""
    out: set[str] = set()
    for program in PROGRAMS.programs[:-1]:
        out |= {program.name.lower(), program.pathway.lower()}
        out.add(type(program.functions).__module__.split(".")[2])
    return out


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = [
        tree,
        *(
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ),
    ]
    return {
        id(n.body[0].value)
        for n in nodes
        if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }


def names_in(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every identifier, imported module and string constant."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.name
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, node.module or ""
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        ):
            yield node.lineno, node.value


def pathway_names(path: Path, *, root: Path = ROOT) -> list[str]:
    banned = words()
    found = []
    for line, text in names_in(path):
        flat = text.lower().replace("_", "").replace("-", "")
        hits = [w for w in banned if w in flat]
        imports = [p for p in PACKAGES if text == p or text.startswith(p + ".")]
        if hits or imports:
            found.append(f"{path.relative_to(root)}:{line}: {text!r}")
    return found


@pytest.mark.parametrize("path", shared_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_shared_module_names_no_pathway(path: Path) -> None:
    assert pathway_names(path) == []


def test_the_check_finds_a_pathway_named_in_code(tmp_path: Path) -> None:
    """The check itself can fail: each way of naming a pathway is found, a docstring is not."""
    package = sorted(PACKAGES)[0]
    source = (
        '"""Mentions docs/grove.md in a docstring only."""\n'
        f"import {package}.program\n"
        "GROVE_ANNOTATION = 'x'\n"
        "pathway = 'DisaggregatedSet'\n"
    )
    probe = tmp_path / "probe.py"
    probe.write_text(source)
    found = pathway_names(probe, root=tmp_path)
    assert [f.split(":")[1] for f in found] == ["2", "3", "4"]


def test_main_s_routing_module_named_pathways(tmp_path: Path) -> None:
    """Before issue 42 the shared routing module held Grove's annotation (a known offender)."""
    probe = tmp_path / "routing.py"
    probe.write_text('ENABLE_GROVE = "nvidia.com/enable-grove"\n')
    assert pathway_names(probe, root=tmp_path) == [
        "routing.py:1: 'ENABLE_GROVE'",
        "routing.py:1: 'nvidia.com/enable-grove'",
    ]
