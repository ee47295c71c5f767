"""The agent over many namespaces, a graph in each, and its Lease renewals meanwhile (no tests
here): shared by ``tests/cluster/test_agent_many_namespaces.py`` (a count beyond the 100
connections one pool had) and ``bench/many_namespaces.py`` (40 namespaces, about 720 watches).

Renewals are read from the Lease itself: its ``renewTime`` is the agent's clock when it sent
the update, so the gap between two stored renewals is the time between two sends the server
confirmed, which must stay under the renew deadline for the agent to keep leading
(docs/runtime.md §1). A renewal's latency is that gap less the retry period the elector sleeps.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from tests.cluster.support.grove import GROVE_AUTO
from tests.support.agent import running_agent
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import ENABLE_GROVE, component, graph
from tests.support.kube import Kube, ready_reason
from tests.support.kubectl import FieldWatch
from tests.support.polling import eventually

LEASE_NAME = "many-namespaces"
RETRY_PERIOD = 2.0
RENEW_DEADLINE = 10.0
RENEWALS = 5  # stored renewals a run waits for, at least
# 13 common kinds, 2 of the DisaggregatedSet pathway, 3 of Grove's: the watches per namespace.
WATCHES_PER_NAMESPACE = 18


@dataclass
class Figures:
    namespaces: int
    watches: int = 0  # the agent's running watches, from its /metrics
    converged_seconds: float = 0.0
    edit_seconds: float = 0.0
    renewals: list[float] = field(default_factory=list)  # stored renewTimes (epoch seconds)

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.renewals, self.renewals[1:], strict=False)]

    def latencies(self) -> list[float]:
        return [max(0.0, gap - RETRY_PERIOD) for gap in self.gaps()]

    def report(self) -> str:
        lat = sorted(self.latencies())
        if not lat:
            return f"{self.namespaces} namespaces: no renewal seen"
        p99 = lat[min(len(lat) - 1, round(0.99 * (len(lat) - 1)))]
        return (
            f"{self.namespaces} namespaces, {self.watches} watches: "
            f"every graph Ready in {self.converged_seconds:.1f} s, the edit in the last namespace "
            f"reconciled in {self.edit_seconds:.1f} s; {len(lat)} Lease renewals, latency "
            f"p50 {statistics.median(lat):.3f} s, p99 {p99:.3f} s, worst {lat[-1]:.3f} s "
            f"(worst gap between confirmed renewals {max(self.gaps()):.2f} s, renew deadline "
            f"{RENEW_DEADLINE:.0f} s)"
        )


def _parse(micro_time: str) -> float:
    return datetime.fromisoformat(micro_time.replace("Z", "+00:00")).timestamp()


def _renewed(lease: dict[str, Any]) -> float | None:
    """The Lease's stored ``renewTime`` (epoch seconds); None for none or a release."""
    spec = lease.get("spec") or {}
    renewed = spec.get("renewTime") if spec.get("holderIdentity") else None
    return _parse(renewed) if renewed else None


def _stamps(watch: FieldWatch) -> list[float]:
    return sorted({stamp for stamp in watch.values() if stamp is not None})


def create_namespaces(client: Client, prefix: str, count: int) -> list[str]:
    names = [f"{prefix}-{i:02d}" for i in range(count)]
    for name in names:
        meta = ObjectMeta(name=name, labels={"syncagent-test": "true"})
        client.create(Namespace(metadata=meta))
    return names


def delete_namespaces(client: Client, names: list[str]) -> None:
    for name in names:
        client.delete(Namespace, name)


def run(
    kubeconfig: Path | str,
    kube: Kube,
    namespaces: list[str],
    *,
    renewals: int = RENEWALS,
) -> Figures:
    """Run the agent over ``namespaces`` (a Component graph in each), leading on a Lease in the
    first; every graph must become Ready, then an edit in the last one must be reconciled, and
    the agent must still lead after ``renewals`` stored renewals."""
    for ns in namespaces:
        kube.create(graph(ns, "g", [component("frontend", "frontend")], **{ENABLE_GROVE: "false"}))
    figures = Figures(len(namespaces))
    flags = [arg for ns in namespaces[1:] for arg in ("--namespace", ns)]
    flags += [
        *GROVE_AUTO,
        "--leader-election-namespace",
        namespaces[0],
        "--leader-election-id",
        LEASE_NAME,
        "--leader-election-renew-deadline",
        str(RENEW_DEADLINE),
        "--leader-election-retry-period",
        str(RETRY_PERIOD),
    ]
    deadline = 60.0 + 4.0 * len(namespaces)
    with (
        # Its own connections, closed only once its thread has ended (FieldWatch).
        FieldWatch(kube, "Lease", namespaces[0], LEASE_NAME, _renewed) as lease,
        running_agent(kubeconfig, *flags, namespace=namespaces[0], leader_elect=True) as agent,
    ):
        started = time.monotonic()

        def every_graph_ready() -> bool:
            return all(
                ready_reason(kube, ns, "g") == "all_resources_are_ready" for ns in namespaces
            )

        def kubelet() -> None:
            for ns in namespaces:
                simulate_ready(kube, ns)

        eventually(every_graph_ready, step=kubelet, deadline=deadline, what="every graph Ready")
        figures.converged_seconds = time.monotonic() - started
        last = namespaces[-1]
        edited = time.monotonic()
        kube.edit_graph(last, "g", _scale_frontend)
        eventually(
            lambda: (
                (kube.get("Deployment", last, "g-frontend") or {}).get("spec", {}).get("replicas")
                == 3
            ),
            deadline=60.0,
            what=f"the edit of the graph in {last} to reach its Deployment",
        )
        figures.edit_seconds = time.monotonic() - edited
        eventually(agent.ready, deadline=30.0, what="readiness: every watch synced")
        # Leading through several renewals with every watch open, not just the first ones.
        samples = agent.scrape().samples
        figures.watches = sum(1 for name, _ in samples if name == "syncagent_watch_unsynced")
        eventually(
            lambda: len(_stamps(lease)) >= renewals,
            deadline=renewals * RENEW_DEADLINE,
            what=f"{renewals} Lease renewals",
        )
        assert '"leadership lost"' not in agent.logs(), agent.logs()[-3000:]
        assert agent.is_leader()
        figures.renewals = _stamps(lease)  # the release at the agent's exit is no renewal
    return figures


def _scale_frontend(graph: dict) -> None:
    graph["spec"]["components"][0]["replicas"] = 3
