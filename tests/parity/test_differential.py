"""Differential parity: upstream's own operator code against ``syncagent render``, per object and
field by field.

Upstream's side is our harness (``differential/harness/main.go``) compiled inside upstream's
extracted ``deploy/operator`` module: upstream's DGD defaulting webhook, then its DGD reconciler
(Component and Grove programs) and DCD reconciler on a controller-runtime fake client, until a
round writes nothing. Ours is ``syncagent render -o json --program P``. Graphs: every reference
graph (``dgd-examples/``, ``upstream/``) and N generated ones (hypothesis; N =
``$SYNCAGENT_DIFF_EXAMPLES``, default 200), each on the Component and Grove pathways and, when
eligible, on the DisaggregatedSet pathway, whose roles compare with the LeaderWorkerSets upstream
renders for the same components. Under two operator configurations (diff_configs.py): upstream's
defaults, and a production-shaped one given to both sides (every reference graph, and
``$SYNCAGENT_DIFF_PRODUCTION_EXAMPLES`` generated ones, default 48: the second lane's time is
kept small). Upstream's objects are edited by exactly the deliberate
differences of docs/parity.md that name ``diff/...`` cases; anything else that differs fails,
listed with its path, upstream's value and ours.
"""

from __future__ import annotations

import functools
import os
import random
from typing import Any

import pytest

from syncagent.ssa.api import KubeApi
from tests.parity.support import diff_graphs
from tests.parity.support.diff_cases import cases_for, reference_cases
from tests.parity.support.diff_configs import DEFAULT, PRODUCTION
from tests.parity.support.diff_report import failure_message, stale_differences
from tests.parity.support.diff_run import CaseResult, DiffCase, ServerStore, run_cases
from tests.parity.support.differential import Pathway
from tests.parity.support.reference import (
    REPO,
    missing_reference,
    params_or_missing,
    reference_root,
)
from tests.parity.support.upstream_harness import BuildReport, ensure_harness
from tests.support.parity_differences import Difference, parse_differences

EXAMPLES = int(os.environ.get("SYNCAGENT_DIFF_EXAMPLES") or 200)
PRODUCTION_EXAMPLES = int(os.environ.get("SYNCAGENT_DIFF_PRODUCTION_EXAMPLES") or 48)
# A run's seed: given, to reproduce a failing run, or drawn and printed with any failure.
SEED = int(os.environ.get("SYNCAGENT_DIFF_SEED") or random.randrange(2**32))


pytestmark = pytest.mark.cluster


@pytest.fixture
def store(api: KubeApi, clusterenv_namespace: str) -> ServerStore:
    return ServerStore(api, clusterenv_namespace)


def differences() -> list[Difference]:
    return parse_differences((REPO / "docs" / "parity.md").read_text())


@functools.cache
def harness() -> BuildReport:
    report = ensure_harness(reference_root() / "source")
    state = "built" if report.built else "cached"
    print(f"differential harness {state} in {report.seconds:.1f}s: {report.binary}")
    return report


_REFERENCE_RESULTS: dict[str, CaseResult] = {}


async def reference_results(store: ServerStore) -> dict[str, CaseResult]:
    """All reference cases in one batch, run by the first test that asks (its namespace hosts
    every dry run; nothing is persisted)."""
    if not _REFERENCE_RESULTS:
        cases = [*reference_cases(), *reference_cases(PRODUCTION)]
        results = await run_cases(harness().binary, cases, differences(), store)
        _REFERENCE_RESULTS.update({r.case.id: r for r in results})
    return _REFERENCE_RESULTS


def _reference_params() -> list[Any]:
    ids = (
        []
        if missing_reference()
        else [c.id for c in [*reference_cases(), *reference_cases(PRODUCTION)]]
    )
    return params_or_missing(ids, ids)


@pytest.mark.anyio
@pytest.mark.parametrize("case_id", _reference_params())
async def test_reference_graph_renders_as_upstream_does(case_id: str, store: ServerStore) -> None:
    result = (await reference_results(store))[case_id]
    failed = bool(result.error or result.divergences)
    assert not failed, failure_message([result])


def test_every_pathway_and_backend_has_a_reference_graph() -> None:
    """The reference comparison above covers each pathway with graphs of each backend."""
    seen = {(c.pathway, _backend(c)) for c in reference_cases()}
    missing = {(p, b) for p in Pathway for b in diff_graphs.BACKENDS} - seen
    assert not missing, f"no reference graph for {sorted(missing)}"


def _backend(case: DiffCase) -> str:
    graph = next(d for d in case.docs if d.get("kind") == "DynamoGraphDeployment")
    return str(graph["spec"].get("backendFramework", ""))


# -- generated graphs -------------------------------------------------------------------------


def generated_cases(count: int, run_seed: int, config: str = DEFAULT) -> list[DiffCase]:
    """``count`` graphs drawn by hypothesis, the same number of each shape (backend x
    topology), each on all its pathways. One hypothesis run per shape, seeded from the run's
    seed: the same seed draws the same graphs."""
    drawn = diff_graphs.drawn_graphs(count, run_seed)
    cases = []
    for index, (graph, backend) in enumerate(drawn):
        cases += cases_for(f"generated/{index}", [graph], f"gen-{index}", backend, config=config)
    return cases


@pytest.mark.anyio
@pytest.mark.timeout(600 + 10 * EXAMPLES)  # two busy cores: ~3 s a graph, with room
async def test_generated_graphs_render_as_upstream_does(store: ServerStore) -> None:
    """``SYNCAGENT_DIFF_EXAMPLES`` graphs (default 200) covering every backend x topology and
    every pathway; the failure lists every divergence, grouped, then each failing graph's YAML
    with the run's seed (``SYNCAGENT_DIFF_SEED``) to draw the same graphs again."""
    listed = differences()
    results = await _generated_results(store, EXAMPLES, DEFAULT, listed)
    stale = stale_differences(listed, results)
    assert not stale, f"docs/parity.md lists differences no diff case shows: {stale}"


@pytest.mark.anyio
@pytest.mark.timeout(600 + 10 * PRODUCTION_EXAMPLES)
async def test_generated_graphs_render_as_upstream_does_under_production(
    store: ServerStore,
) -> None:
    """The production-shaped configuration (diff_configs.PRODUCTION) on fewer generated graphs
    (``SYNCAGENT_DIFF_PRODUCTION_EXAMPLES``), still every backend x topology and pathway."""
    await _generated_results(store, PRODUCTION_EXAMPLES, PRODUCTION, differences())


async def _generated_results(
    store: ServerStore, count: int, config: str, listed: list[Difference]
) -> list[CaseResult]:
    cases = generated_cases(count, SEED, config)
    covered = {(c.pathway, _backend(c), _multinode(c)) for c in cases}
    wanted = {
        (p, b, m)
        for p in Pathway
        for b in diff_graphs.BACKENDS
        for m in (False, True)
        if p is not Pathway.DISAGGREGATEDSET or m
    }
    assert wanted <= covered, f"seed {SEED}: graphs cover no {sorted(wanted - covered)}"
    results = await run_cases(harness().binary, cases, listed, store)
    failed = [r for r in results if r.error or r.divergences]
    assert not failed, failure_message(failed, seed=SEED, total=len(results))
    return results


def _multinode(case: DiffCase) -> bool:
    graph = next(d for d in case.docs if d.get("kind") == "DynamoGraphDeployment")
    return any("multinode" in c for c in graph["spec"]["components"])
