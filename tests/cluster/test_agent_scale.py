"""Steady state (issue 5 acceptance 4): with 50 graphs converged, a full resync costs 0 writes,
as the agent's own request counters on /metrics show. Figures: ``bench/agent_resync.py``."""

from __future__ import annotations

from tests.cluster.support.resync import resync_window
from tests.support.agent import running_agent
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import component, graph
from tests.support.kube import ready_reason
from tests.support.polling import eventually

GRAPHS = 50
RESYNC = 4.0


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
