"""The README's laptop flow, as a user types it: ``syncagent dev-cluster up``, ``env``, the built
``kubectl apply -f examples/agg.yaml``, ``syncagent run``, a Ready graph; then ``up --bare``
under the same name exits 1, and ``down`` leaves nothing running."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from lightkube import Client, KubeConfig

from syncagent.devcluster import ensure_binaries
from tests.e2e.support.observe import wait_ready
from tests.support.agent import running_agent
from tests.support.kube import Kube

REPO = Path(__file__).resolve().parent.parent.parent


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syncagent.cli.main", "dev-cluster", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )


def test_readme_laptop_flow_ends_with_a_ready_graph(tmp_path):
    name = f"e2e-{uuid.uuid4().hex[:6]}"
    up = _cli("up", "--name", name, "--nodes", "2")
    try:
        assert up.returncode == 0, up.stderr
        assert "2 GPU nodes" in up.stdout
        assert "LWS manager v0.9.0 with webhooks" in up.stdout
        env_line = _cli("env", "--name", name)
        assert env_line.returncode == 0, env_line.stderr
        kubeconfig = env_line.stdout.strip().removeprefix("export KUBECONFIG=")
        assert Path(kubeconfig).is_file()
        kubectl = ensure_binaries().kubectl
        applied = subprocess.run(
            [str(kubectl), "apply", "-f", str(REPO / "examples" / "agg.yaml")],
            capture_output=True,
            text=True,
            env={**os.environ, "KUBECONFIG": kubeconfig},
            timeout=120,
            check=False,
        )
        assert applied.returncode == 0, applied.stderr
        assert "dynamographdeployment.nvidia.com/qwen-agg created" in applied.stdout
        other_kind = _cli("up", "--name", name, "--bare")
        assert other_kind.returncode == 1
        assert other_kind.stderr.startswith(
            f"error: dev-cluster/{name}: a simulated full cluster already runs under this name"
        )
        again = _cli("up", "--name", name)
        assert again.returncode == 0
        assert "already running" in again.stdout
        with (
            Client(config=KubeConfig.from_file(kubeconfig)) as client,
            running_agent(kubeconfig, namespace="default"),
        ):
            wait_ready(Kube(client), "default", "qwen-agg", what="the README example Ready")
        shown = subprocess.run(
            [str(kubectl), "get", "dgd", "qwen-agg", "--no-headers"],
            capture_output=True,
            text=True,
            env={**os.environ, "KUBECONFIG": kubeconfig},
            timeout=60,
            check=False,
        )
        assert shown.stdout.split()[:2] == ["qwen-agg", "True"], shown
    finally:
        down = _cli("down", "--name", name)
    assert down.returncode == 0, down.stderr
    assert f"dev-cluster/{name} stopped" in down.stdout
    gone = _cli("env", "--name", name)
    assert gone.returncode == 1
    assert "not running" in gone.stderr
