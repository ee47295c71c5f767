"""``syncagent run`` with one of its ports taken: one line naming the flag, exit 1, not an
internal error (each endpoint listens on its own address)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""
OFF = {"--metrics-bind-address": "0", "--health-probe-bind-address": "0"}


@pytest.mark.parametrize(
    "flag", ["--metrics-bind-address", "--health-probe-bind-address", "--history-bind-address"]
)
def test_a_taken_port_is_one_line_naming_its_flag(flag: str, tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(KUBECONFIG)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        flags = {**OFF, flag: address}
        argv = [sys.executable, "-m", "syncagent.cli.main", "run", "--no-leader-elect"]
        argv += ["--kubeconfig", str(config), *(x for pair in flags.items() for x in pair)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"error: {flag} {address}: cannot listen there: Address already in use; give a free "
        "HOST:PORT, or 0"
    ]
