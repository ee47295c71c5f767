"""Upstream's golden contracts, matched against what ``syncagent render`` produces.

For each scenario of ``golden/`` and ``upstream/dgdr-golden/``: the input manifests go into a
``clusterenv-*`` namespace (as upstream's harness applies them), ``syncagent render`` renders
them, and every rendered object and input is created with a server-side dry-run apply on the
test control plane (our CRDs and the pinned LWS/DS/Grove CRDs), so the server adds its defaults
as it did when upstream read its goldens back. Upstream's contract, minus exactly the
differences listed in ``docs/parity.md``, must then match with upstream's rules.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from golden_contract import bind_variables, compare_manifests, load_contract
from lightkube import AsyncClient, Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace
from parity_differences import Difference, apply_differences, parse_differences
from parity_support import (
    REPO,
    GoldenCase,
    dump,
    golden_cases,
    in_namespace,
    missing_reference,
    params_or_missing,
    render_json,
)

from syncagent.ssa.api import KubeApi
from syncagent.ssa.desired import ref_of

pytestmark = pytest.mark.cluster
INPUT_MANAGER = "parity-input"
PARITY_DOC = REPO / "docs" / "parity.md"


def differences() -> list[Difference]:
    return parse_differences(PARITY_DOC.read_text())


def _cases() -> list[Any]:
    cases = [] if missing_reference() else golden_cases()
    return params_or_missing(cases, [c.id for c in cases])


@pytest.fixture
def clusterenv_namespace(kubeconfig) -> Iterator[str]:
    """A fresh namespace named as upstream's clusterenv names them (its contracts match
    ``clusterenv-*`` namespaces)."""
    name = f"clusterenv-{uuid.uuid4().hex[:8]}"
    with Client(config=kubeconfig) as c:
        c.create(Namespace(metadata=ObjectMeta(name=name)))
    yield name
    with Client(config=kubeconfig) as c:
        c.delete(Namespace, name)


@pytest.fixture
def api(async_client: AsyncClient) -> KubeApi:
    return KubeApi(async_client)


async def dry_run(api: KubeApi, obj: dict[str, Any], manager: str) -> dict[str, Any]:
    return await api.apply(ref_of(obj), obj, manager=manager, force=True, dry_run=True)


async def actual_objects(api: KubeApi, case: GoldenCase, namespace: str) -> list[dict[str, Any]]:
    """The inputs and everything ``syncagent render`` makes of them, as the server stores them."""
    inputs = in_namespace(case.inputs, namespace)
    out = [await dry_run(api, doc, INPUT_MANAGER) for doc in inputs]
    for item in render_json(dump(inputs)):
        out.append(await dry_run(api, item["object"], item["manager"]))
    return out


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
    actual = await actual_objects(api, case, clusterenv_namespace)
    problems = compare_manifests(adapted, actual, namespace=clusterenv_namespace)
    assert not problems, (
        f"{case.id}: differences from upstream not listed in docs/parity.md:\n"
        + "\n".join(problems)
    )
    stale = [f"{d.id} ({d.title})" for d in listed if edits[d.id] == 0]
    assert not stale, f"{case.id}: docs/parity.md lists differences that no longer occur: {stale}"


def test_every_listed_difference_names_existing_cases() -> None:
    ids = [c.id for c in golden_cases()]
    for difference in differences():
        assert any(difference.applies_to(i) for i in ids), (
            f"{difference.id} names no existing case: {difference.cases}"
        )
