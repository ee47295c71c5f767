"""The simulated full cluster of the e2e and chaos tiers, one per session (no tests here)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.support import testlogs

REPO = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="session")
def sim_cluster(pytestconfig: pytest.Config) -> Iterator[SimulatedCluster]:
    """One simulated cluster per session (a tier's conftest imports this fixture)."""
    with started_sim_cluster(pytestconfig) as cluster:
        yield cluster


@pytest.fixture
def control_plane(sim_cluster: SimulatedCluster) -> SimulatedCluster:
    return sim_cluster


@contextlib.contextmanager
def started_sim_cluster(
    pytestconfig: pytest.Config, *, grove_source: Path | None = None
) -> Iterator[SimulatedCluster]:
    """``grove_source``: the Grove source tarball, to run the real Grove operator too."""
    crds = sorted((REPO / "crds").glob("*.yaml"))
    # $SYNCAGENT_E2E_WORKDIR keeps the cluster's files (every component's log) after the run;
    # so does a run that keeps its logs ($SYNCAGENT_TEST_LOGS).
    kept = os.environ.get("SYNCAGENT_E2E_WORKDIR")
    workdir = Path(kept) if kept else testlogs.component_dir("simulated-cluster")
    cluster = SimulatedCluster(extra_crds=crds, workdir=workdir, grove_source=grove_source)
    cluster.start()
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"simulated cluster up: {cluster.describe()}")
    try:
        yield cluster
    finally:
        cluster.stop()
