"""Fixtures shared by every tier.

Cluster tests (``tests/cluster/``) get a real control plane per LWS version, started lazily on
first use and stopped when the session ends; each test gets its own namespace, an admin
``client`` (``async_client``), ``kube`` (raw JSON requests) and the pinned ``kubectl``. The e2e tier
(``tests/e2e/``) overrides ``control_plane`` with one simulated full cluster per session.
``ci_policy`` makes a run fail when it skipped anything or a tier it asked for executed no test.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from lightkube import AsyncClient, Client, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from syncagent.devcluster import ControlPlane, ensure_binaries, versions
from syncagent.devcluster.build import ensure_helm
from syncagent.devcluster.simcluster import ensure_tools
from syncagent.runtime.client import http_for
from tests.ci_policy import pytest_configure, tier_of  # noqa: F401 (pytest_configure is a hook)
from tests.support import figures, testlogs, threads
from tests.support.kube import TEST_TIMEOUT, Kube
from tests.support.kubectl import Kubectl
from tests.support.upstream_source import grove_source_if_any

REPO = Path(__file__).resolve().parent.parent
TEST_MANAGER = "syncagent-tests"


def our_crds() -> list[Path]:
    return sorted((REPO / "crds").glob("*.yaml"))


def kubernetes_version() -> str:
    """The kube-apiserver release the cluster tier runs against: the pinned one, or the one of
    ``versions.KUBERNETES_MATRIX`` that ``$SYNCAGENT_KUBE_VERSION`` (a minor: ``1.30``) names."""
    minor = os.environ.get("SYNCAGENT_KUBE_VERSION", "")
    if not minor:
        return versions.KUBERNETES
    if minor not in versions.KUBERNETES_MATRIX:
        raise pytest.UsageError(
            f"SYNCAGENT_KUBE_VERSION={minor}: not one of {', '.join(versions.KUBERNETES_MATRIX)}"
            " (syncagent/devcluster/versions.py); unset it for the pinned "
            f"{versions.KUBERNETES}"
        )
    return versions.KUBERNETES_MATRIX[minor]


class ControlPlanes:
    """One control plane per LWS version (a server cannot hold two versions of a CRD)."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._planes: dict[str, ControlPlane] = {}
        self.descriptions: list[str] = []

    def get(self, lws_version: str) -> ControlPlane:
        if lws_version not in self._planes:
            plane = ControlPlane(
                lws_version=lws_version,
                extra_crds=our_crds(),
                workdir=testlogs.component_dir(f"control-plane-{lws_version}"),
                binaries=ensure_binaries(kubernetes=kubernetes_version()),
            )
            plane.start()
            self._planes[lws_version] = plane
            self.descriptions.append(plane.describe())
            self._say(f"control plane up: {plane.describe()}")
        return self._planes[lws_version]

    def stop_all(self) -> None:
        while self._planes:
            _, plane = self._planes.popitem()
            plane.stop()

    def _say(self, line: str) -> None:
        reporter = self._config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(line)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def control_planes(pytestconfig: pytest.Config) -> Iterator[ControlPlanes]:
    planes = ControlPlanes(pytestconfig)
    pytestconfig.stash[_PLANES] = planes
    try:
        yield planes
    finally:
        planes.stop_all()


@pytest.fixture
def control_plane(request: pytest.FixtureRequest, control_planes: ControlPlanes) -> ControlPlane:
    marker = request.node.get_closest_marker("lws")
    version = marker.args[0] if marker else versions.DEFAULT_LWS
    return control_planes.get(version)


@pytest.fixture
def kubeconfig(control_plane: ControlPlane) -> KubeConfig:
    return KubeConfig.from_file(str(control_plane.kubeconfig))


@pytest.fixture
def client(kubeconfig: KubeConfig) -> Iterator[Client]:
    c = Client(config=kubeconfig, field_manager=TEST_MANAGER, timeout=TEST_TIMEOUT)
    yield c
    c.close()


@pytest.fixture
async def async_client(kubeconfig: KubeConfig) -> AsyncIterator[httpx2.AsyncClient]:
    """The HTTP client the product sends its requests over (``runtime/client.py``)."""
    c = http_for(kubeconfig.get(), timeout=httpx2.Timeout(10.0))
    yield c
    await c.aclose()


@pytest.fixture
async def typed_client(kubeconfig: KubeConfig) -> AsyncIterator[AsyncClient]:
    """lightkube's typed client, for tests that list or watch typed objects as a cache does."""
    c = AsyncClient(config=kubeconfig, field_manager=TEST_MANAGER)
    yield c
    await c.close()


@pytest.fixture
def kube(client: Client) -> Kube:
    """Raw JSON requests on the test's control plane, through ``client``'s connection."""
    return Kube(client)


@pytest.fixture
def kubectl(control_plane: ControlPlane, namespace: str) -> Kubectl:
    """The pinned ``kubectl`` (built with the control plane), bound to the test's namespace."""
    return Kubectl(ensure_binaries().kubectl, control_plane.kubeconfig, namespace)


@pytest.fixture
def namespace(kubeconfig: KubeConfig) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:10]}"
    with Client(config=kubeconfig, field_manager=TEST_MANAGER) as c:
        c.create(Namespace(metadata=ObjectMeta(name=name, labels={"syncagent-test": "true"})))
    yield name
    with Client(config=kubeconfig, field_manager=TEST_MANAGER) as c:
        c.delete(Namespace, name)


# -- run-wide policy -------------------------------------------------------------------------

_PLANES = pytest.StashKey[ControlPlanes]()
# The markers that decide which binaries a run builds: ``cluster`` for the cluster tier, ``helm``
# for the chart tier and every ``test_helm*`` file, ``e2e`` (the simulated cluster) for the e2e
# and chaos tiers: the control plane's binaries plus kwok and the LWS manager, and for the e2e
# tier the Grove operator (and helm, which renders its chart's webhooks) when Grove's source is
# there (without it the session's cluster runs none, and the Grove scenarios fail).
BUILDERS = {
    "cluster": lambda: ensure_binaries(kubernetes=kubernetes_version()).kube_apiserver.parent,
    "helm": ensure_helm,
    "e2e": lambda: [
        ensure_binaries().kube_apiserver.parent,
        *ensure_tools(grove_source=grove_source_if_any()),
    ],
    "chaos": lambda: [ensure_binaries().kube_apiserver.parent, *ensure_tools()],
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item.nodeid)
        if tier == "cluster":
            item.add_marker(pytest.mark.cluster)
        if tier == "e2e":
            item.add_marker(pytest.mark.e2e)
        if tier == "chaos":
            item.add_marker(pytest.mark.chaos)
        if tier == "chart" or Path(str(item.path)).name.startswith("test_helm"):
            item.add_marker(pytest.mark.helm)


def pytest_collection_finish(session: pytest.Session) -> None:
    # Build (or find) the Go binaries a selected tier needs before any test runs, outside every
    # per-test timeout: a cold build of kube-apiserver takes many minutes. Unit tests need none.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    needs = {m for item in session.items for m in BUILDERS if item.get_closest_marker(m)}
    for need in sorted(needs):
        started = time.monotonic()
        where = BUILDERS[need]()
        if reporter is not None:
            reporter.write_line(
                f"{need} binaries ready in {time.monotonic() - started:.1f}s: {where}"
            )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    planes = terminalreporter.config.stash.get(_PLANES, None)
    for description in planes.descriptions if planes else []:
        terminalreporter.write_line(f"ran against {description}")
    for line in figures.lines():
        terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    threads.record(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    result = yield
    left = threads.left_running(item)
    if left:
        raise AssertionError(f"{item.nodeid} left threads running: {', '.join(left)}")
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report ends with the last lines of its agents' logs, with their paths,
    when the run keeps logs (``$SYNCAGENT_TEST_LOGS``, set by ``.ci/run``)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed:
        for title, tail in testlogs.agent_log_tails(item.nodeid):
            report.sections.append((title, tail))
