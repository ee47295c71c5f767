"""Bad input never crashes (issue 15, R3): 500 invalid graphs per run, fed to ``render``,
``convert`` and the agent's validation.

The graphs are mutations of the shipped examples (``tests/support/badgraphs.py``): wrong types,
values out of range, unicode where a pattern or enum rules, missing required fields, deep
nesting, unknown fields. Where a mutation lands, and so that the graph is invalid, is decided
by our CRD's structural schema, which a real API server enforces (``tests/cluster/
test_fuzz_bad_input_cluster.py`` holds the same graphs against one). Every graph must end in
exit 1 with one line naming the object and the mutated field (an unknown field: exit 0 and a
``warning:`` line naming it), and in the agent as a status condition naming the field; never a
traceback. The CLI runs in-process for speed; a few graphs run through the installed
``syncagent`` binary too, which must answer exactly the same.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from syncagent.cli.pathways import PROGRAMS
from syncagent.programs import capabilities, routing, status
from syncagent.programs.component.program import PATHWAY as COMPONENT
from syncagent.programs.context import GraphContext, build_status
from syncagent.programs.graph import run_graph
from syncagent.programs.view import DictStore
from tests.support import figures
from tests.support.badgraphs import BadGraph, bad_graphs
from tests.support.cli import BINARY, run_cli

GRAPHS = 500
TABLE = "bad-input fuzz (unit tier, in-process)"
FUZZ = settings(
    max_examples=GRAPHS,
    deadline=None,
    database=None,  # no .hypothesis/ folder in the checkout; every run draws afresh
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def as_text(doc: dict[str, Any]) -> str:
    # JSON is YAML; PyYAML's dumper and orjson refuse the deep-nesting graphs, json does not.
    return json.dumps(doc, ensure_ascii=False)


def names_field(line: str, bad: BadGraph) -> bool:
    if bad.path in line:
        return True
    # PyYAML recurses per level: a very deep document fails to parse before any field exists.
    return bad.kind == "deep" and "nested too deeply to parse" in line


def check_cli_outcome(command: str, code: int, out: str, err: str, bad: BadGraph) -> str:
    assert "Traceback" not in err, err
    assert "internal error" not in err, err
    lines = err.splitlines()
    if bad.expect == "reject":
        assert code == 1, (command, bad.kind, bad.path, out[:300], err)
        assert out == ""
        assert len(lines) == 1, err
        assert lines[0].startswith("error: "), err
        assert names_field(lines[0], bad), (bad.path, lines[0])
        return "exit 1"
    assert code == 0, (command, bad.path, err)
    warned = [ln for ln in lines if ln.startswith("warning: ") and bad.path in ln]
    assert warned, (bad.path, err)
    assert f'unknown field "{bad.path}"' in warned[0]
    return "exit 0 + warning"


# What `render` assumes offline, Grove switched off: the agent's Component pathway.
CAPS = capabilities.offline({"grove": capabilities.Setting.FALSE}, declared=PROGRAMS.capabilities())


def agent_context(doc: dict[str, Any]) -> GraphContext:
    graph = {**doc, "metadata": {**doc.get("metadata", {}), "namespace": "ns", "uid": "u1"}}
    return GraphContext(
        graph=graph,
        caps=CAPS,
        selection=routing.Selection(COMPONENT),
        recorded=None,
        store=DictStore(),
        writer=None,  # type: ignore[arg-type]  # an invalid graph runs no program
        now="2026-01-01T00:00:00Z",
        programs=PROGRAMS,
    )


def check_agent_outcome(bad: BadGraph) -> str:
    ctx = agent_context(bad.doc)
    if bad.expect == "reject":
        result = anyio.run(run_graph, ctx)
        ready = status.find(result.status.get("conditions"), status.READY) or {}
        assert ready.get("reason") == status.VALIDATION_FAILED, (bad.path, ready)
        assert bad.path in str(ready.get("message")), (bad.path, ready)
        return "Ready=False validation_failed"
    built = build_status(ctx, status.GraphResult(status.PENDING, "x", "y"))
    cond = status.find(built["conditions"], status.UNKNOWN_FIELDS) or {}
    assert f'unknown field "{bad.path}"' in str(cond.get("message")), (bad.path, cond)
    return "UnknownFields condition"


@FUZZ
@given(bad=bad_graphs())
def test_500_invalid_graphs_end_in_one_line_or_a_condition_naming_the_field(bad: BadGraph):
    text = as_text(bad.doc)
    figures.count(TABLE, f"graphs: {bad.kind}")
    for command in ("render", "convert"):
        code, out, err = run_cli([command, "-f", "-"], text)
        figures.count(TABLE, f"{command}: {check_cli_outcome(command, code, out, err, bad)}")
    figures.count(TABLE, f"agent: {check_agent_outcome(bad)}")


@pytest.fixture(scope="module", autouse=True)
def _ran_at_least_500() -> Iterator[None]:
    yield
    counts = figures.TABLES[TABLE]
    generated = sum(n for key, n in counts.items() if key.startswith("graphs: "))
    if generated:  # the fuzz test ran in this session
        assert generated >= GRAPHS, f"hypothesis generated only {generated} graphs"


@settings(max_examples=6, deadline=None, database=None)
@given(bad=bad_graphs(), command=st.sampled_from(["render", "convert"]))
def test_the_installed_binary_answers_like_the_in_process_entry(bad: BadGraph, command: str):
    text = as_text(bad.doc)
    proc = subprocess.run(
        [str(BINARY), command, "-f", "-"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == run_cli([command, "-f", "-"], text)
    check_cli_outcome(command, proc.returncode, proc.stdout, proc.stderr, bad)
    figures.count(TABLE, f"subprocess runs: {command}")


def test_examples_stay_valid():
    # The mutations start from valid graphs: otherwise "rejected" would prove nothing.
    from tests.support.badgraphs import examples

    for doc in examples():
        code, _, err = run_cli(["render", "-f", "-"], yaml.safe_dump(doc))
        assert (code, err) == (0, ""), err
