"""The chaos tier: faults on the simulated full cluster (one per session, as in the e2e tier).

The agent runs as a subprocess behind :class:`tests.chaos.support.proxy.ApiProxy`, an HTTP
proxy that records its writes and injects API faults; the real controllers (kube-controller-
manager, kube-scheduler, kwok, the LWS/DisaggregatedSet manager) run the workloads, and an
EndpointSlice recorder on the server says whether any component was ever left without a ready
endpoint. Every test prints its figures (``-s`` not needed: they go to the terminal summary).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.chaos.support.figures import Figures
from tests.support.sim import started_sim_cluster


@pytest.fixture(scope="session")
def sim_cluster(pytestconfig: pytest.Config) -> Iterator[SimulatedCluster]:
    with started_sim_cluster(pytestconfig) as cluster:
        yield cluster


@pytest.fixture
def control_plane(sim_cluster: SimulatedCluster) -> SimulatedCluster:
    return sim_cluster


@pytest.fixture(scope="session")
def figures(pytestconfig: pytest.Config) -> Figures:
    return Figures.of(pytestconfig)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    Figures.of(terminalreporter.config).report(terminalreporter)
