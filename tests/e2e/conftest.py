"""The e2e tier: one simulated full cluster per session (syncagent.devcluster.simcluster).

Every controller-manager controller, the scheduler, kwok GPU nodes whose pods become Running and
Ready, and the real LeaderWorkerSet manager (LWS and DisaggregatedSet controllers, webhooks).
Nothing in this tier writes a workload's status: the real controllers do. The agent runs as a
subprocess (``tests/support/agent.py``), as in the cluster tier.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncagent.devcluster.simcluster import SimulatedCluster

REPO = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="session")
def sim_cluster(pytestconfig: pytest.Config) -> Iterator[SimulatedCluster]:
    crds = sorted((REPO / "crds").glob("*.yaml"))
    # $SYNCAGENT_E2E_WORKDIR keeps the cluster's logs (every component's) after the run.
    kept = os.environ.get("SYNCAGENT_E2E_WORKDIR")
    cluster = SimulatedCluster(extra_crds=crds, workdir=Path(kept) if kept else None)
    cluster.start()
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"simulated cluster up: {cluster.describe()}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def control_plane(sim_cluster: SimulatedCluster) -> SimulatedCluster:
    return sim_cluster
