"""The e2e tier: one simulated full cluster per session (syncagent.devcluster.simcluster).

Every controller-manager controller, the scheduler, kwok GPU nodes whose pods become Running and
Ready, and the real LeaderWorkerSet manager (LWS and DisaggregatedSet controllers, webhooks).
Nothing in this tier writes a workload's status: the real controllers do. The agent runs as a
subprocess (``tests/support/agent.py``), as in the cluster tier; so does upstream's operator
(``tests/e2e/support/upstream_operator.py``), built from ``$SYNCAGENT_REFERENCE/source``: without
it the tests that need it fail, never skip. The same goes for the real Grove operator
(``syncagent.devcluster.grove_operator``), which the session's cluster runs when
``$SYNCAGENT_REFERENCE/source`` holds Grove's source tarball (``versions.GROVE_SOURCE``): without
it the cluster serves Grove's CRDs only, and the Grove scenarios fail (``grove_cluster``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from syncagent.devcluster import versions
from syncagent.devcluster.simcluster import SimulatedCluster
from tests.e2e.support.upstream_crds import crd_folder, upstream_crds_installed
from tests.e2e.support.upstream_operator import FIGURES, ensure_operator
from tests.support import figures
from tests.support.kube import Kube
from tests.support.sim import control_plane, started_sim_cluster  # noqa: F401 (fixtures)
from tests.support.upstream_source import (
    BuildReport,
    grove_source,
    grove_source_if_any,
    missing_source,
    reference_root,
)


@pytest.fixture(scope="session")
def sim_cluster(pytestconfig: pytest.Config) -> Iterator[SimulatedCluster]:
    """The session's simulated cluster, with the real Grove operator when its source is there."""
    with started_sim_cluster(pytestconfig, grove_source=grove_source_if_any()) as cluster:
        yield cluster


@pytest.fixture
def grove_cluster(sim_cluster: SimulatedCluster) -> SimulatedCluster:
    """The session's cluster, failing the test when it runs no Grove operator."""
    if sim_cluster.grove_source is None:
        pytest.fail(
            f"the Grove operator needs its source, {grove_source()}: not found; set "
            "SYNCAGENT_REFERENCE to the shared/reference folder holding source/"
            f"{versions.GROVE_SOURCE}",
            pytrace=False,
        )
    return sim_cluster


@pytest.fixture(scope="session")
def operator_binary() -> BuildReport:
    """Upstream's operator binary, built once (or found in the cache); its build time counted."""
    problem = missing_source()
    if problem:
        pytest.fail(problem, pytrace=False)
    report = ensure_operator(reference_root() / "source")
    key = "build (cold)" if report.built else "build (cached)"
    figures.count(FIGURES, key, round(report.seconds * 1000))
    return report


@pytest.fixture
def upstream_crds(kube: Kube, operator_binary: BuildReport) -> Iterator[list[str]]:
    """The snapshot's CRDs for the test (tests/e2e/support/upstream_crds.py), ours after it."""
    with upstream_crds_installed(kube, crd_folder(operator_binary.binary)) as names:
        yield names
