"""The chaos tier: faults on the simulated full cluster (one per session, as in the e2e tier).

The agent runs as a subprocess behind :class:`tests.support.apiproxy.ApiProxy`, an HTTP
proxy that records its writes and injects API faults; the real controllers (kube-controller-
manager, kube-scheduler, kwok, the LWS/DisaggregatedSet manager) run the workloads, and an
EndpointSlice recorder on the server says whether any component was ever left without a ready
endpoint. Every test prints its figures (``-s`` not needed: they go to the terminal summary).
"""

from __future__ import annotations

import pytest

from tests.chaos.support.figures import Figures
from tests.support.sim import control_plane, sim_cluster  # noqa: F401 (fixtures)


@pytest.fixture(scope="session")
def figures(pytestconfig: pytest.Config) -> Figures:
    return Figures.of(pytestconfig)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    Figures.of(terminalreporter.config).report(terminalreporter)
