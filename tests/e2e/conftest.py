"""The e2e tier: one simulated full cluster per session (syncagent.devcluster.simcluster).

Every controller-manager controller, the scheduler, kwok GPU nodes whose pods become Running and
Ready, and the real LeaderWorkerSet manager (LWS and DisaggregatedSet controllers, webhooks).
Nothing in this tier writes a workload's status: the real controllers do. The agent runs as a
subprocess (``tests/support/agent.py``), as in the cluster tier; so does upstream's operator
(``tests/e2e/support/upstream_operator.py``), built from ``$SYNCAGENT_REFERENCE/source``: without
it the tests that need it fail, never skip.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.support.upstream_crds import crd_folder, upstream_crds_installed
from tests.e2e.support.upstream_operator import FIGURES, ensure_operator
from tests.support import figures
from tests.support.kube import Kube
from tests.support.sim import control_plane, sim_cluster  # noqa: F401 (fixtures)
from tests.support.upstream_source import BuildReport, missing_source, reference_root


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
