"""YAML alias bombs (issue 41, item 5): a stream whose aliases expand past the budget is refused
with one line naming the file, before anything walks the expansion; one within it reads as if
written out.

Hypothesis draws the bomb's shape: how many levels, how many aliases per level, lists or
mappings, and where it sits (its own document beside the graph, or inside the graph's spec).
On main, ``render`` walked the expansion: 0.46 s at 5 levels of 10 and ten times longer per
level, so the 7- to 12-level bombs drawn here ran for minutes or days.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from syncagent.api import expansion
from syncagent.api.load import LoadError, load_documents
from tests.support import figures
from tests.support.cli import BINARY, run_cli

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "agg.yaml"
TABLE = "alias-bomb fuzz (unit tier)"
FUZZ = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@dataclass(frozen=True)
class Bomb:
    levels: int
    width: int
    mapping: bool
    inside_graph: bool

    def expanded(self) -> int:
        # Level 0 holds `width` scalars; each level above refers `width` times to the one below.
        nodes = 1 + self.width
        for _ in range(self.levels):
            nodes = 1 + self.width * nodes
        return nodes

    def lines(self, indent: str) -> list[str]:
        out = [f"{indent}l0: &l0 {self._container(['x'] * self.width)}"]
        for level in range(1, self.levels + 1):
            refs = [f"*l{level - 1}"] * self.width
            out.append(f"{indent}l{level}: &l{level} {self._container(refs)}")
        return out

    def _container(self, items: list[str]) -> str:
        if self.mapping:
            return "{" + ", ".join(f"k{i}: {v}" for i, v in enumerate(items)) + "}"
        return "[" + ", ".join(items) + "]"

    def stream(self) -> str:
        graph = EXAMPLE.read_text(encoding="utf-8")
        if self.inside_graph:
            return graph.replace(
                "spec:\n", "spec:\n  x-bomb:\n" + "\n".join(self.lines("    ")) + "\n", 1
            )
        config = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
        return graph + config + "\n".join(self.lines("  ")) + "\n"


def bombs(*, big: bool) -> st.SearchStrategy[Bomb]:
    shapes = st.builds(
        Bomb,
        levels=st.integers(1, 12),
        width=st.integers(2, 12),
        mapping=st.booleans(),
        inside_graph=st.booleans(),
    )
    if big:
        return shapes.filter(lambda b: b.expanded() > 2 * expansion.ALIAS_BUDGET)
    return shapes.filter(lambda b: b.expanded() < expansion.ALIAS_BUDGET // 10)


@FUZZ
@given(bomb=bombs(big=True))
def test_a_bomb_is_refused_in_one_line_naming_the_file_within_a_second(bomb: Bomb):
    text = bomb.stream()
    for command in ("render", "convert", "plan"):
        # CPU seconds of this process (the command runs in it): the work the refusal costs,
        # which a loaded machine's wait for a core does not change.
        started = time.process_time()
        code, out, err = run_cli([command, "-f", "-"], text)
        took = time.process_time() - started
        assert code == 1, (command, bomb, err)
        assert out == ""
        # convert names standard input "stdin", render and plan "-" (as they did before).
        assert re.match(
            r"error: (stdin|-): aliases expand it by (about 10\^)?[0-9,]+ nodes", err
        ), err
        assert err.count("\n") == 1, err
        assert took < 1.0, (command, bomb, took)
    figures.count(TABLE, f"refused: {'mapping' if bomb.mapping else 'list'} bombs")


@FUZZ
@given(bomb=bombs(big=False))
def test_aliases_within_the_budget_read_as_if_written_out(bomb: Bomb):
    plain = run_cli(["render", "-f", "-"], EXAMPLE.read_text(encoding="utf-8"))
    assert plain[0] == 0, plain[2]
    code, out, err = run_cli(["render", "-f", "-"], bomb.stream())
    if bomb.inside_graph:
        # Read, then refused by the schema for the unknown field like any written-out value.
        assert "aliases expand" not in err, err
        assert "x-bomb" in err, err
    else:
        assert (code, out) == (0, plain[1]), err
    figures.count(TABLE, "accepted: aliases within the budget")


def test_a_nine_level_bomb_through_the_installed_binary_is_refused_in_under_a_second(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(Bomb(levels=9, width=10, mapping=False, inside_graph=False).stream())
    started = time.monotonic()
    done = subprocess.run(
        [BINARY, "render", "-f", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    took = time.monotonic() - started
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"error: {path}: aliases expand it by "), done.stderr
    assert done.stderr.count("\n") == 1
    assert took < 1.0 + _startup(), took


def _startup() -> float:
    """The binary's own start-up time (imports), which the budget does not govern."""
    started = time.monotonic()
    subprocess.run([BINARY, "--help"], capture_output=True, check=True, timeout=60)
    return time.monotonic() - started


@pytest.mark.parametrize(
    ("text", "own", "expanded"),
    [
        ("a: 1\n", 2, 2),
        ("a: &a [1, 2]\nb: *a\n", 5, 7),
        ("a: &a {x: 1}\nb: [*a, *a, *a]\n", 7, 10),
    ],
)
def test_measure_counts_each_shared_value_once_and_its_expansion_in_full(text, own, expanded):
    size = expansion.measure(yaml.safe_load(text))
    assert (size.own, size.expanded, size.cyclic) == (own, expanded, False)


@pytest.mark.parametrize("text", ["a: &a [*a]\n", "a: &a\n  b: [1, {c: *a}]\n"])
def test_an_alias_inside_its_own_anchor_is_refused_naming_the_file(text):
    with pytest.raises(LoadError) as info:
        load_documents(text, source="f.yaml")
    assert str(info.value).startswith("f.yaml: an alias refers to the value that holds it")


def test_measure_walks_deep_input_without_recursing():
    deep: list = []
    for _ in range(50_000):
        deep = [deep]
    size = expansion.measure(deep)
    assert size.own == size.expanded == 50_001
