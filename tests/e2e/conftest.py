"""The e2e tier: one simulated full cluster per session (syncagent.devcluster.simcluster).

Every controller-manager controller, the scheduler, kwok GPU nodes whose pods become Running and
Ready, and the real LeaderWorkerSet manager (LWS and DisaggregatedSet controllers, webhooks).
Nothing in this tier writes a workload's status: the real controllers do. The agent runs as a
subprocess (``tests/support/agent.py``), as in the cluster tier.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.support.sim import started_sim_cluster


@pytest.fixture(scope="session")
def sim_cluster(pytestconfig: pytest.Config) -> Iterator[SimulatedCluster]:
    with started_sim_cluster(pytestconfig) as cluster:
        yield cluster


@pytest.fixture
def control_plane(sim_cluster: SimulatedCluster) -> SimulatedCluster:
    return sim_cluster
