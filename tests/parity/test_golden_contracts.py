"""Upstream's golden contracts, matched against what ``syncagent render`` produces.

For each scenario of ``golden/`` and ``upstream/dgdr-golden/``: the input manifests go into a
``clusterenv-*`` namespace (as upstream's harness applies them), ``syncagent render`` renders
them, and every rendered object and input is created with a server-side dry-run apply on the
test control plane (our CRDs and the pinned LWS/DS/Grove CRDs), so the server adds its defaults
as it did when upstream read its goldens back. Upstream's contract, minus exactly the
differences listed in ``docs/parity.md``, must then match with upstream's rules.
"""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.ssa.api import KubeApi
from tests.parity.support.diff_cases import reference_cases
from tests.parity.support.reference import (
    REPO,
    GoldenCase,
    documents,
    dry_run_all,
    golden_cases,
    in_namespace,
    missing_reference,
    params_or_missing,
)
from tests.support.golden_contract import bind_variables, compare_manifests, load_contract
from tests.support.parity_differences import Difference, apply_differences, parse_differences

pytestmark = pytest.mark.cluster
PARITY_DOC = REPO / "docs" / "parity.md"


def differences() -> list[Difference]:
    return parse_differences(PARITY_DOC.read_text())


def _cases() -> list[Any]:
    cases = [] if missing_reference() else golden_cases()
    return params_or_missing(cases, [c.id for c in cases])


@pytest.mark.anyio
@pytest.mark.parametrize("case", _cases())
async def test_golden_contract(
    case: GoldenCase | str, api: KubeApi, clusterenv_namespace: str
) -> None:
    assert isinstance(case, GoldenCase)
    expected = load_contract(case.output.read_text())
    listed = [d for d in differences() if d.applies_to(case.id)]
    adapted, edits = apply_differences(expected, listed)
    # syncagent renders no worker hash (D2), so no $var may remain bound to anything.
    adapted = [bind_variables(doc, {}) for doc in adapted]
    inputs = in_namespace(documents(case.inputs), clusterenv_namespace)
    actual = await dry_run_all(api, inputs)
    problems = compare_manifests(adapted, actual, namespace=clusterenv_namespace)
    assert not problems, (
        f"{case.id}: differences from upstream not listed in docs/parity.md:\n"
        + "\n".join(problems)
    )
    stale = [f"{d.id} ({d.title})" for d in listed if edits[d.id] == 0]
    assert not stale, f"{case.id}: docs/parity.md lists differences that no longer occur: {stale}"


def test_every_listed_difference_names_existing_cases() -> None:
    # The differential tier's reference cases count too (its generated ones share their ids'
    # shape); whether each difference still edits something there, that tier checks.
    ids = [c.id for c in golden_cases()] + [c.id for c in reference_cases()]
    for difference in differences():
        assert any(difference.applies_to(i) for i in ids), (
            f"{difference.id} names no existing case: {difference.cases}"
        )
