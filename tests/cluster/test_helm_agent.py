"""Issue 7 acceptance: the agent, run out of cluster with a token of the ServiceAccount the chart
created (watchNamespaces = the test namespace), passes the Component-program scenarios of the
agent issue (tests/cluster/test_agent_component.py), and the API server denies none of its
requests."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Namespace, ServiceAccount

from syncagent.devcluster import ControlPlane
from tests.cluster import test_agent_component as scenarios
from tests.cluster.support.chart_identity import token_kubeconfig
from tests.support.agent import Agent, running_agent
from tests.support.helm import Helm
from tests.support.kube import Kube
from tests.support.polling import eventually

SCENARIOS: list[Callable[..., None]] = [
    getattr(scenarios, name) for name in sorted(dir(scenarios)) if name.startswith("test_")
]


@dataclass(frozen=True)
class ChartIdentity:
    """Stands in for the control plane in the scenarios: its kubeconfig holds the chart
    ServiceAccount's token instead of admin credentials."""

    kubeconfig: Path
    server: str
    release_namespace: str


@pytest.fixture
def chart_identity(
    control_plane: ControlPlane, client: Client, namespace: str, tmp_path: Path
) -> Iterator[ChartIdentity]:
    release_ns = f"{namespace}-sys"
    client.create(Namespace(metadata=ObjectMeta(name=release_ns, labels={"syncagent-test": "1"})))
    helm = Helm(control_plane, tmp_path)
    try:
        helm.install(
            release_ns, release_ns, "crds.install=false", f"watchNamespaces={{{namespace}}}"
        )
        try:
            account = f"{release_ns}-syncagent"
            live = client.get(ServiceAccount, account, namespace=release_ns)
            assert live.metadata.labels["app.kubernetes.io/managed-by"] == "Helm"
            token = control_plane.token_for(namespace=release_ns, service_account=account)
            path = token_kubeconfig(control_plane, token, tmp_path / "agent.kubeconfig")
            yield ChartIdentity(path, control_plane.server, release_ns)
        finally:
            helm.uninstall(release_ns, release_ns)
    finally:
        client.delete(Namespace, release_ns)


@contextlib.contextmanager
def _agent_never_denied(kubeconfig: Path | str, *args: str, **kw: Any) -> Iterator[Agent]:
    """The scenario's agent; afterwards, even when the scenario failed, no request may have
    been denied (a denial is the likeliest cause of a failure that only this identity shows)."""
    with running_agent(kubeconfig, *args, **kw) as agent:
        try:
            yield agent
        finally:
            _assert_never_denied(agent)


def _assert_never_denied(agent: Agent) -> None:
    lines = [line for line in agent.logs().splitlines() if "forbidden" in line.lower()]
    denied = len(lines)
    if agent.proc.poll() is None:
        denied = max(denied, int(agent.scrape().sum("syncagent_api_requests_total", code="403")))
    assert denied == 0, f"the chart's RBAC denied {denied} request(s):\n" + "\n".join(lines[:20])


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.removeprefix("test_"))
def test_component_scenario_under_the_chart_service_account(
    scenario: Callable[..., None],
    chart_identity: ChartIdentity,
    kube: Kube,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scenarios, "running_agent", _agent_never_denied)
    scenario(chart_identity, kube, namespace)


def test_agent_leads_through_the_chart_lease_role(
    chart_identity: ChartIdentity, client: Client, namespace: str
) -> None:
    lease_ns = chart_identity.release_namespace
    with _agent_never_denied(
        chart_identity.kubeconfig,
        "--leader-election-namespace",
        lease_ns,
        namespace=namespace,
        leader_elect=True,
    ) as agent:
        eventually(agent.is_leader, deadline=30, what="the agent to take the Lease")
    lease = client.get(Lease, "syncagent", namespace=lease_ns)
    assert lease.spec.leaseDurationSeconds
