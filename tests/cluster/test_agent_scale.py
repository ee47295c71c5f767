"""Steady state (issue 5 acceptance 4): with 50 graphs converged, a full resync costs 0 writes,
as the agent's own request counters on /metrics show. Figures: ``bench/agent_resync.py``."""

from __future__ import annotations

from tests.support.agent import Agent, running_agent
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import component, graph
from tests.support.kube import ready_reason
from tests.support.polling import eventually

GRAPHS = 50
RESYNC = 4.0


def resync_window(agent: Agent, *, graphs: int, deadline: float) -> tuple[float, float]:
    """Scrape until every graph was reconciled again; returns (writes, requests) meanwhile."""
    before = agent.scrape()
    start = before.sum("syncagent_reconcile_total", controller="dgd")
    after = eventually(
        lambda: (
            (m := agent.scrape()).sum("syncagent_reconcile_total", controller="dgd")
            >= start + graphs
            and m
        ),
        deadline=deadline,
        what="a full resync",
    )
    return after.writes() - before.writes(), reconcile_requests(after) - reconcile_requests(before)


def reconcile_requests(m) -> float:
    """Requests a reconcile makes (gets, dry runs, writes): not watches, lists, discovery
    refreshes (resource ""), Lease renewals or Events."""
    return m.requests(
        verbs=("get", "patch", "create", "update", "delete"), exclude=("", "leases", "events")
    )


def test_full_resync_of_50_converged_graphs_costs_no_writes(control_plane, kube, namespace):
    for i in range(GRAPHS):
        kube.create(
            graph(
                namespace,
                f"g{i:02d}",
                [component("frontend", "frontend"), component("decode", "decode")],
            )
        )
    args = ("--resync-period", f"{RESYNC}s", "--concurrency", "8")
    with running_agent(control_plane.kubeconfig, *args, namespace=namespace) as agent:

        def all_ready() -> bool:
            simulate_ready(kube, namespace)
            return all(
                ready_reason(kube, namespace, f"g{i:02d}") == "all_resources_are_ready"
                for i in range(GRAPHS)
            )

        eventually(all_ready, deadline=400, what=f"{GRAPHS} graphs to become Ready")
        # Converged: a whole resync passes without a write (the last status writes of the
        # convergence may still be in flight when the graphs first report Ready).
        eventually(
            lambda: resync_window(agent, graphs=GRAPHS, deadline=4 * RESYNC + 60)[0] == 0,
            deadline=120,
            what="a resync without writes",
        )
        for _ in range(3):
            writes, requests = resync_window(agent, graphs=GRAPHS, deadline=4 * RESYNC + 60)
            assert writes == 0
            # Reads come from the watch caches and convergence from the engine's cache.
            assert requests == 0, f"{requests} requests in one full resync"
