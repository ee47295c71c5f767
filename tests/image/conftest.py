"""The image tier: ``packaging/build-image`` runs once per session, before any test and outside
every per-test timeout, and the tests hold the archive it wrote."""

from __future__ import annotations

import pytest

from tests.ci_policy import tier_of
from tests.image.support.build import REPO, Built, build_image

_BUILT = pytest.StashKey[Built]()


def pytest_collection_finish(session: pytest.Session) -> None:
    if _BUILT in session.config.stash or not any(
        tier_of(item.nodeid) == "image" for item in session.items
    ):
        return
    built = build_image(REPO / "dist", "--rootfs")
    session.config.stash[_BUILT] = built
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(
            f"image built in {built.seconds:.0f}s: {built.archive} "
            f"({built.archive.stat().st_size} bytes, {built.digest})"
        )


@pytest.fixture(scope="session")
def built(pytestconfig: pytest.Config) -> Built:
    return pytestconfig.stash[_BUILT]
