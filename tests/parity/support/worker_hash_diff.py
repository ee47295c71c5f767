"""The worker hash against upstream's (no tests here): the v2 hash upstream's operator recorded
on each graph it reconciled, and the worker DCD names that carry it, against
``syncagent.render.specworkerhash.compute_worker_hash`` of the graph upstream stored.

The graph hashed is upstream's stored copy (after its admission defaulting: replicas, the
origin-version stamp), as upstream hashes it; its worker-hash annotations and status are
dropped first (upstream computes the hash before it records it).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from syncagent.api.workerhash import CURRENT_WORKER_HASH, CURRENT_WORKER_HASH_V2, is_worker
from syncagent.render import component_dcd_name
from syncagent.render.specworkerhash import compute_worker_hash
from tests.parity.support.diff_run import DiffCase, in_namespace
from tests.parity.support.upstream_harness import HarnessCase, HarnessResult, run_harness
from tests.support.graphs import typed

DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"


@dataclass(slots=True)
class HashReport:
    compared: Counter[str] = field(default_factory=Counter)  # per "backend/multinode" shape
    unhashed: list[str] = field(default_factory=list)  # cases upstream recorded no hash on
    findings: list[str] = field(default_factory=list)


def harness_cases(cases: Iterable[DiffCase]) -> list[HarnessCase]:
    """One upstream run per graph and pathway family (Component, Grove), as the tier runs them."""
    seen: dict[str, HarnessCase] = {}
    for case in cases:
        if case.takeover:
            continue
        grove = case.pathway.upstream_grove
        key = f"{case.namespace}/{'grove' if grove else 'component'}/{case.discovery_backend}"
        seen.setdefault(
            key,
            HarnessCase(
                id=key,
                namespace=case.namespace,
                objects=in_namespace(case),
                grove=grove,
                discovery_backend=case.discovery_backend,
            ),
        )
    return list(seen.values())


def compare_hashes(binary: Any, cases: Sequence[HarnessCase]) -> HashReport:
    report = HashReport()
    for case_id, result in run_harness(binary, cases).items():
        if result.error:
            continue  # a graph upstream cannot run: the differential tier reports those
        _compare(case_id, result, report)
    return report


def _stored_graph(result: HarnessResult) -> dict[str, Any]:
    graph = copy.deepcopy(next(o for o in result.objects if o.get("kind") == DGD))
    graph.pop("status", None)
    annotations = graph["metadata"].get("annotations") or {}
    for key in (CURRENT_WORKER_HASH, CURRENT_WORKER_HASH_V2):
        annotations.pop(key, None)
    return graph


def _compare(case_id: str, result: HarnessResult, report: HashReport) -> None:
    theirs = next(o for o in result.objects if o.get("kind") == DGD)
    recorded = (theirs["metadata"].get("annotations") or {}).get(CURRENT_WORKER_HASH_V2)
    if not recorded:
        report.unhashed.append(case_id)
        return
    graph = typed(_stored_graph(result))
    try:
        ours = compute_worker_hash(graph)
    except Exception as error:  # every failure is a finding, named
        report.findings.append(f"{case_id}: syncagent could not compute the hash: {error}")
        return
    report.compared[_shape(graph)] += 1
    if ours != recorded:
        report.findings.append(f"{case_id}: worker hash upstream={recorded} syncagent={ours}")
        return
    report.findings += _name_findings(case_id, graph, result.objects, ours)


def _name_findings(
    case_id: str, graph: Any, objects: Sequence[Mapping[str, Any]], worker_hash: str
) -> list[str]:
    """Every worker DCD upstream named with the hash is named so by syncagent too."""
    upstream = {o["metadata"]["name"] for o in objects if o.get("kind") == DCD}
    found = []
    for component in graph.spec.components:
        if not is_worker(component.type):
            continue
        ours = component_dcd_name(graph, component, worker_hash=worker_hash)
        if upstream and ours not in upstream:
            found.append(f"{case_id}: worker DCD {ours} not among upstream's {sorted(upstream)}")
    return found


def _shape(graph: Any) -> str:
    backend = graph.spec.backend_framework or _backend_of(graph)
    multinode = any(c.wire().get("multinode") for c in graph.spec.components)
    return f"{backend}/{'multinode' if multinode else 'single-node'}"


def _backend_of(graph: Any) -> str:
    words = str([c.wire() for c in graph.spec.components])
    return next((b for b in ("vllm", "sglang", "trtllm") if f"dynamo.{b}" in words), "none")
