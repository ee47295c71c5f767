"""Issue 26 item 2: an agent that watches every namespace never reconciles a graph in
kube-system, kube-public or kube-node-lease; named with --namespace, kube-system is reconciled.

Each agent is a shard whose selector matches only this test's graphs, so graphs other tests
left in the shared control plane stay out of it."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

from syncagent.devcluster import ControlPlane
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.kube import Kube
from tests.support.polling import eventually

DEADLINE = 60.0
SYSTEM = ("kube-system", "kube-public", "kube-node-lease")


def _labelled(ns: str, name: str, run: str) -> dict[str, Any]:
    doc = graph(ns, name, [component("Frontend", "frontend")])
    doc["metadata"]["labels"] = {"syncagent-test-run": run}
    return doc


def _routed(kube: Kube, ns: str, name: str) -> dict[str, Any] | None:
    return ((kube.get("DynamoGraphDeployment", ns, name) or {}).get("status") or {}).get("routing")


@contextlib.contextmanager
def _graphs(kube: Kube, docs: list[dict[str, Any]]) -> Iterator[None]:
    for doc in docs:
        kube.create(doc)
    try:
        yield
    finally:
        for doc in docs:
            kube.delete(
                "DynamoGraphDeployment", doc["metadata"]["namespace"], doc["metadata"]["name"]
            )


def _shard(run: str) -> tuple[str, ...]:
    return ("--shard-name", "t", "--shard-selector", f"syncagent-test-run={run}")


def test_an_all_namespaces_agent_leaves_system_namespaces_alone(
    control_plane: ControlPlane, kube: Kube, namespace: str
) -> None:
    run = uuid.uuid4().hex[:8]
    name = f"sys-{run}"
    docs = [_labelled(ns, name, run) for ns in SYSTEM]
    # The system graphs exist before the agent lists; the test namespace's graph is created
    # once the agent runs, and its routing shows the agent reconciling.
    with (
        _graphs(kube, docs),
        running_agent(control_plane.kubeconfig, *_shard(run)) as agent,
        _graphs(kube, [_labelled(namespace, name, run)]),
    ):
        eventually(
            lambda: _routed(kube, namespace, name),
            deadline=DEADLINE,
            what="the graph in the test namespace to be routed",
        )
        assert agent.proc.poll() is None
        for ns in SYSTEM:
            assert _routed(kube, ns, name) is None, f"{ns}: the agent reconciled its graph"
            assert kube.list("DynamoComponentDeployment", ns) == [], ns


def test_kube_system_named_with_namespace_is_reconciled(
    control_plane: ControlPlane, kube: Kube
) -> None:
    run = uuid.uuid4().hex[:8]
    name = f"sys-{run}"
    args = (*_shard(run), "--namespace", "kube-system")
    with (
        _graphs(kube, [_labelled("kube-system", name, run)]),
        running_agent(control_plane.kubeconfig, *args),
    ):
        eventually(
            lambda: _routed(kube, "kube-system", name),
            deadline=DEADLINE,
            what="the graph in kube-system to be routed",
        )
