"""Golden output of ``syncagent render`` for every shipped example graph.

Regenerate after an intended rendering change with
``SYNCAGENT_UPDATE_GOLDEN=1 pytest tests/unit/cli/test_examples_golden.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from syncagent.cli.main import main

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
GOLDEN = REPO / "tests" / "golden"
UPDATE = os.environ.get("SYNCAGENT_UPDATE_GOLDEN") == "1"


def test_the_three_shipped_examples_exist():
    assert {p.name for p in EXAMPLES} >= {"agg.yaml", "disagg.yaml", "disagg-multinode.yaml"}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_opts_out_of_grove(example):
    doc = yaml.safe_load(example.read_text())
    assert doc["metadata"]["annotations"]["nvidia.com/enable-grove"] == "false"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_render_matches_golden(example, capsys):
    assert main(["render", "-f", str(example), "-n", "dynamo-demo"]) == 0
    out = capsys.readouterr().out
    golden = GOLDEN / example.name
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out)
    assert golden.exists(), f"no golden file; run with SYNCAGENT_UPDATE_GOLDEN=1: {golden}"
    assert out == golden.read_text(), f"render output of {example.name} changed"


# Last, so that an update run writes the files before this looks for them.
def test_every_golden_file_has_an_example():
    assert {p.name for p in GOLDEN.glob("*.yaml")} == {p.name for p in EXAMPLES}
