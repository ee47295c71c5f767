"""Upstream's worker hash, computed by syncagent (docs/parity.md D1): the committed Go type table
is what upstream's source says, and on every reference graph and ``SYNCAGENT_DIFF_EXAMPLES``
(default 200) generated ones, each backend, single-node and multinode, syncagent's
``nvidia.com/current-worker-hash-v2`` equals the one upstream's operator (the differential
harness) recorded, and every worker DCD name carrying it equals upstream's.

No control plane: upstream's side is the harness alone, ours the pure renderer.
"""

from __future__ import annotations

import functools
import os
import random
from typing import Any

from syncagent.api.gotypes import TABLE
from tests.parity.support import diff_graphs
from tests.parity.support.diff_cases import cases_for, reference_cases
from tests.parity.support.gotypes_tool import ensure_tool, table_text, upstream_table
from tests.parity.support.reference import reference_root
from tests.parity.support.upstream_harness import ensure_harness
from tests.parity.support.worker_hash_diff import HashReport, compare_hashes, harness_cases

EXAMPLES = int(os.environ.get("SYNCAGENT_DIFF_EXAMPLES") or 200)
SEED = int(os.environ.get("SYNCAGENT_DIFF_SEED") or random.randrange(2**32))
# Runtime versions at, above and below upstream's 1.5.0 threshold, tagged as images carry them.
TAGS = ("1.5.0", "v1.6.2", "1.7.0-rc1", "1.4.9", "0.6.1")


@functools.cache
def harness() -> Any:
    return ensure_harness(reference_root() / "source").binary


def test_the_committed_go_type_table_is_upstreams() -> None:
    binary = ensure_tool(reference_root() / "source").binary
    assert TABLE.read_text() == table_text(upstream_table(binary)), (
        f"{TABLE} is stale: regenerate it with `python -m tests.parity.support.gotypes_tool`"
    )


def _assert_matches(report: HashReport, *, note: str = "") -> None:
    assert not report.findings, f"{note}{len(report.findings)} differences:\n" + "\n".join(
        report.findings
    )
    print(f"worker hashes compared: {dict(report.compared)}; unhashed: {len(report.unhashed)}")


def test_reference_graphs_hash_as_upstream_does() -> None:
    report = compare_hashes(harness(), harness_cases(reference_cases()))
    _assert_matches(report)
    assert sum(report.compared.values()) > 0


def _retagged(graph: dict[str, Any], index: int) -> dict[str, Any]:
    """Every other graph's images get a tag of ``TAGS``: the runtime version is hashed."""
    if index % 2:
        tag = TAGS[(index // 2) % len(TAGS)]
        for component in graph["spec"]["components"]:
            for container in component.get("podTemplate", {}).get("spec", {}).get("containers", []):
                if ":" in str(container.get("image", "")):
                    container["image"] = container["image"].rsplit(":", 1)[0] + ":" + tag
    return graph


def generated_graphs(count: int, run_seed: int) -> list[tuple[dict[str, Any], str]]:
    """``count`` graphs, the same number of each shape (backend x topology), seeded."""
    drawn = diff_graphs.drawn_graphs(count, run_seed)
    return [(_retagged(g, i), backend) for i, (g, backend) in enumerate(drawn)]


def test_generated_graphs_hash_as_upstream_does() -> None:
    cases = []
    for index, (graph, backend) in enumerate(generated_graphs(EXAMPLES, SEED)):
        cases += cases_for(f"generated/{index}", [graph], f"gen-{index}", backend)
    report = compare_hashes(harness(), harness_cases(cases))
    _assert_matches(report, note=f"seed {SEED}: ")
    shapes = {f"{b}/{m}" for b in diff_graphs.BACKENDS for m in ("single-node", "multinode")}
    assert shapes <= set(report.compared), (
        f"seed {SEED}: no hash compared for {shapes - set(report.compared)}"
    )
    assert sum(report.compared.values()) >= EXAMPLES
