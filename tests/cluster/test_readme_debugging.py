"""The README's "Debugging ownership" walk-through, run as written: the commands are read from
the README's block, each run in a shell as a user types it (``syncagent`` and the kubectl plugin
from the installed scripts, the pinned ``kubectl``, ``$KUBECONFIG`` whose context names the
namespace) against the real API server with the agent running, and each one's output checked.
A command added to or changed in the README without a check here fails the test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import yaml

from syncagent.devcluster.build import ensure_binaries
from tests.support.agent import running_agent
from tests.support.fake_workloads import become_ready, simulate_ready
from tests.support.kube import Kube
from tests.support.polling import eventually

REPO = Path(__file__).resolve().parents[2]
MARKER = "<!-- debugging-ownership -->"
DEADLINE = 90.0

Run = subprocess.CompletedProcess[str]


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(re.escape(MARKER) + r"\n```sh\n(.*?)\n```", text, re.DOTALL)
    assert block, f"README.md: no ```sh block after {MARKER}"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def _ok(run: Run) -> bool:
    return run.returncode == 0


class Shown:
    """One run of a command and whether its check held: falsy until it does, and what the
    polling helper reports as the last value when it never does."""

    def __init__(self, run: Run, held: bool) -> None:
        self.run, self.held = run, held

    def __bool__(self) -> bool:
        return self.held

    def __repr__(self) -> str:
        return f"exit {self.run.returncode}; stdout: {self.run.stdout[-1000:]!r}; replicas: {[x for x in self.run.stdout.splitlines() if 'replicas' in x]}; stderr: {self.run.stderr[-500:]!r}"


# Each README command and what its output must show (polled until it does: the agent acts on
# the cluster in between).
CHECKS: list[tuple[str, Callable[[Run], bool]]] = [
    (
        "syncagent status qwen-agg",
        lambda r: _ok(r) and "✔ Deployment/qwen-agg-frontend  1/1 ready" in r.stdout,
    ),
    ("kubectl scale deployment qwen-agg-frontend --replicas=3", _ok),
    (
        "syncagent status qwen-agg",
        lambda r: (
            _ok(r)
            and re.search(
                r"event Warning ForcedConflict.*Deployment/\S+/qwen-agg-frontend:.*replicas",
                r.stdout,
            )
            is not None
        ),
    ),
    (
        "syncagent blame deployment/qwen-agg-frontend",
        lambda r: (
            _ok(r)
            and re.search(r"^syncagent/workloads\s+Apply\s+\S+\s+replicas: 1$", r.stdout, re.M)
            is not None
        ),
    ),
    ("syncagent managers qwen-agg", _ok),
    ("syncagent conflicts qwen-agg", _ok),
    (
        "kubectl syncagent status qwen-agg -o json",
        lambda r: _ok(r) and orjson.loads(r.stdout)["tree"]["name"] == "qwen-agg",
    ),
]


def _kubeconfig(source: Path, namespace: str, into: Path) -> Path:
    """The control plane's kubeconfig with the test namespace as its context's namespace."""
    config = yaml.safe_load(source.read_text())
    for ctx in config["contexts"]:
        ctx["context"]["namespace"] = namespace
    into.write_text(yaml.safe_dump(config))
    return into


def test_the_readme_walk_through(control_plane, namespace: str, kube: Kube, tmp_path: Path) -> None:
    assert readme_commands() == [c for c, _ in CHECKS]
    kc = _kubeconfig(Path(control_plane.kubeconfig), namespace, tmp_path / "kubeconfig")
    scripts, kubectl = Path(sys.executable).parent, ensure_binaries().kubectl.parent
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR",)} | {
        "KUBECONFIG": str(kc),
        "PATH": f"{scripts}:{kubectl}:/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    subprocess.run(
        ["kubectl", "apply", "-f", str(REPO / "examples" / "agg.yaml")],
        env=env,
        check=True,
        capture_output=True,
    )
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        become_ready(kube, namespace, "qwen-agg")
        for command, check in CHECKS:

            def run(command: str = command) -> Run:
                return subprocess.run(
                    ["bash", "-c", command],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )

            eventually(
                lambda run=run, check=check: Shown(result := run(), check(result)),
                deadline=DEADLINE,
                step=lambda: simulate_ready(kube, namespace),
                what=f"README command `{command}` to show what it should",
            )
