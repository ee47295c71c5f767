"""Our kinds are declared once (``kube/kinds.py``): no module of the product spells the graph's
or the component's kind as a string of its own (issue 28 item 3). Class names re-exported in
``__all__`` are names, not kinds."""

from __future__ import annotations

import ast
from pathlib import Path

from syncagent.kube import kinds

REPO = Path(__file__).resolve().parents[2]
OURS = {kinds.DGD.kind, kinds.DCD.kind}
DECLARED = REPO / "syncagent" / "kube" / "kinds.py"


def kind_literals(source: str) -> list[int]:
    """Lines of a string literal naming one of our kinds, ``__all__`` entries left out."""
    tree = ast.parse(source)
    exported = {
        id(elt)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        and isinstance(node.value, ast.List | ast.Tuple)
        for elt in node.value.elts
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in OURS and id(node) not in exported
    ]


def test_our_kinds_are_spelled_only_in_kube_kinds() -> None:
    found = {
        str(path.relative_to(REPO)): lines
        for folder in ("syncagent", "fieldmanagers")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != DECLARED and (lines := kind_literals(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "use syncagent.kube.kinds.DGD / DCD"


def test_the_check_sees_a_literal() -> None:
    assert kind_literals(
        'DCD = "DynamoComponentDeployment"\n__all__ = ["DynamoGraphDeployment"]'
    ) == [1]
