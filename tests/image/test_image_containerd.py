"""The archive imported into a real containerd the way ``kind load image-archive`` does it
(``ctr --namespace=k8s.io images import --all-platforms --digests``): the image lands under the
name the chart's default values give, with the digest build-image printed, and its layer
unpacks. containerd runs here only for this check, on its own socket and folders."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import syncagent
from syncagent.devcluster.procs import spawn, stop
from tests.image.support.build import Built
from tests.support.polling import eventually

REFERENCE = f"ghcr.io/syncagent/syncagent:{syncagent.__version__}"
CONFIG = """version = 2
root = "{root}/root"
state = "{root}/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "{root}/containerd.sock"
[ttrpc]
  address = "{root}/containerd.sock.ttrpc"
"""


class Ctr:
    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def __call__(self, *args: str, stdin: Path | None = None) -> subprocess.CompletedProcess[str]:
        with (stdin or Path("/dev/null")).open("rb") as source:
            return subprocess.run(
                ["ctr", "--address", str(self.socket), "--namespace", "k8s.io", *args],
                stdin=source,
                capture_output=True,
                timeout=300,
                check=False,
                text=True,
            )


@pytest.fixture
def ctr(tmp_path: Path) -> Iterator[Ctr]:
    (tmp_path / "config.toml").write_text(CONFIG.format(root=tmp_path))
    daemon = spawn(
        ["containerd", "--config", str(tmp_path / "config.toml")], log=tmp_path / "containerd.log"
    )
    client = Ctr(tmp_path / "containerd.sock")
    try:
        _wait_until_serving(client, daemon, log=tmp_path / "containerd.log")
        yield client
    finally:
        stop(daemon)


def _wait_until_serving(client: Ctr, daemon: subprocess.Popen[bytes], *, log: Path) -> None:
    def serving() -> bool:
        assert daemon.poll() is None, f"containerd exited:\n{log.read_text()[-3000:]}"
        return client("version").returncode == 0

    eventually(serving, deadline=30, what="containerd to serve its socket")


def test_kind_style_import_names_the_chart_default_image(built: Built, ctr: Ctr) -> None:
    imported = ctr(
        "images", "import", "--all-platforms", "--digests", "--snapshotter", "native", "-",
        stdin=built.archive,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    listed = ctr("images", "ls")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[2] for line in listed.stdout.splitlines()[1:]}
    assert rows.get(REFERENCE) == built.digest, listed.stdout
    checked = ctr("images", "check", f"name=={REFERENCE}")
    assert "complete (2/2)" in checked.stdout, checked.stdout + checked.stderr
    # The import unpacked the layer into a committed snapshot, as a node does before a pod starts.
    snapshots = ctr("snapshots", "--snapshotter", "native", "ls")
    assert "Committed" in snapshots.stdout, snapshots.stdout + snapshots.stderr
