"""A graph CRD whose status schema lacks ``status.routing`` (upstream's own, kept by a takeover).

Upstream's DynamoGraphDeployment CRD declares no ``status.routing`` (our design), and the API
server refuses a whole server-side apply that sets an undeclared field (HTTP 500 "field not
declared in schema", whatever ``fieldValidation`` says). The agent must still serve the graph:
its status written without that field (the pathway then comes from the graph's workloads), a log
line naming the field and what to do, and no write once converged.

The CRD here is ours minus that one field: the same schema difference as upstream's, on the real
API server; the e2e takeover runs upstream's own CRDs.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.support.agent import reconciled, running_agent
from tests.support.crd_swap import replace
from tests.support.fake_workloads import become_ready
from tests.support.graphs import annotate, component, graph
from tests.support.kube import DGD, ApiFailure, Kube, condition
from tests.support.polling import eventually

DEADLINE = 60.0
CRD = Path(__file__).resolve().parents[2] / "crds" / "nvidia.com_dynamographdeployments.yaml"


def _without_routing(crd: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(crd)
    served = [v for v in out["spec"]["versions"] if v["served"]]
    for version in served:
        status = version["schema"]["openAPIV3Schema"]["properties"]["status"]
        del status["properties"]["routing"]
    return out


def _routing_refused(kube: Kube, ns: str, name: str) -> bool:
    """Whether the server now refuses ``status.routing`` (a replaced CRD's schema takes effect
    a little after it is Established)."""
    body = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": DGD,
        "metadata": {"name": name, "namespace": ns},
        "status": {"routing": {"pathway": "Component"}},
    }
    try:
        kube.request(
            "PATCH",
            kube.path(DGD, ns, name, "status"),
            body,
            content_type="application/apply-patch+yaml",
            fieldManager="probe",
            dryRun="All",
        )
    except ApiFailure as err:
        return "field not declared in schema" in str(err)
    return False


@contextlib.contextmanager
def _crd_without_routing(kube: Kube) -> Iterator[None]:
    ours = yaml.safe_load(CRD.read_text())
    replace(kube, _without_routing(ours))
    try:
        yield
    finally:
        replace(kube, ours)


def _graph_reconciles(log: str) -> int:
    return sum(1 for e in reconciled(log) if e["controller"] == "dgd")


def test_a_graph_crd_without_status_routing_is_served_without_it(control_plane, kube, namespace):
    with _crd_without_routing(kube):
        kube.create(graph(namespace, "g", [component("frontend", "frontend")]))
        eventually(
            lambda: _routing_refused(kube, namespace, "g"),
            deadline=DEADLINE,
            what="the server refusing status.routing",
        )
        with running_agent(
            control_plane.kubeconfig, "--log-level", "debug", namespace=namespace
        ) as agent:
            become_ready(kube, namespace, "g")
            live = kube.get(DGD, namespace, "g")
            assert "routing" not in live["status"]
            assert condition(live, "WorkloadPathway")["reason"] == "Component"
            warnings = [line for line in agent.logs().splitlines() if "does not declare" in line]
            assert warnings, agent.logs()[-3000:]
            assert "status.routing" in warnings[0]
            assert f"DynamoGraphDeployment/{namespace}/g" in warnings[0]

            # Converged: another reconcile writes nothing (the left-out field is not retried).
            writes = agent.scrape().writes()
            before = _graph_reconciles(agent.logs())
            kube.edit_graph(
                namespace,
                "g",
                annotate({"touch": "1"}),
            )
            eventually(
                lambda: _graph_reconciles(agent.logs()) > before,
                deadline=DEADLINE,
                what="another reconcile of g",
            )
            assert agent.scrape().writes() == writes
            assert len(warnings) == 1
