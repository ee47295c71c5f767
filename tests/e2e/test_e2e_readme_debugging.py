"""The README's "Debugging ownership" walk-through, run as written on the simulated full cluster:
the commands are read from the README's block, each run in a shell as a user types it
(``syncagent`` and the kubectl plugin from the installed scripts, the pinned ``kubectl``,
``$KUBECONFIG`` whose context names the namespace), with the agent running and the real
controllers making the graph Ready, and each one's output checked. A command added to or changed
in the README without a check here fails the test.

``blame --history`` reads the aggregated API the chart registers: the agent here is a host
process with its history port on a non-loopback address of this machine, and the chart's Service
(``syncagent-system/syncagent-history``) and APIService stand in front of it as the chart's would
(tests/support/history.py), so the README's command is the chart user's.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import yaml

from syncagent.devcluster.build import ensure_binaries
from tests.e2e.support.observe import DEADLINE, wait_ready
from tests.support.agent import running_agent
from tests.support.history import aggregated, wait_available
from tests.support.kube import Kube
from tests.support.polling import eventually

REPO = Path(__file__).resolve().parents[2]
MARKER = "<!-- debugging-ownership -->"
# The chart's history Service as `helm install syncagent helm/syncagent -n syncagent-system`
# names it.
CHART_NS, CHART_SERVICE = "syncagent-system", "syncagent-history"
TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*Z"

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
        out = self.run.stdout
        # The head holds the tree's top and the history's spec fields; the tail, the events.
        shown = out if len(out) <= 2500 else f"{out[:1500]}…{out[-1000:]}"
        return f"exit {self.run.returncode}; stdout: {shown!r}; stderr: {self.run.stderr[-500:]!r}"


def _replicas_flipped(run: Run) -> bool:
    """``.spec.replicas`` taken by kubectl's scale (1 -> 3), then back by the agent (3 -> 1)."""
    flips = (
        rf"^\.spec\.replicas\n(?:  .*\n)*?"
        rf"  {TIMESTAMP}  kubectl\S* \(Update/scale\) +1 -> 3\n"
        rf"  {TIMESTAMP}  syncagent/workloads \(Apply\) +3 -> 1$"
    )
    return _ok(run) and re.search(flips, run.stdout, re.M) is not None


# Each README command and what its output must show (polled until it does: the agent and the
# real controllers act on the cluster in between).
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
    ("syncagent blame deployment/qwen-agg-frontend --history", _replicas_flipped),
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


@contextlib.contextmanager
def chart_service(kube: Kube, cert_dir: Path) -> Iterator[tuple[str, ...]]:
    """The chart's history Service in its namespace and its APIService, for an agent on this
    machine; yields the agent's flags. Removed with the namespace after."""
    kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": CHART_NS}})
    try:
        # The Pod needs the namespace's default ServiceAccount, which a controller creates.
        eventually(
            lambda: kube.get("ServiceAccount", CHART_NS, "default"),
            deadline=DEADLINE,
            what=f"ServiceAccount/{CHART_NS}/default to be created",
        )
        with aggregated(kube, CHART_NS, CHART_SERVICE, cert_dir) as flags:
            yield flags
    finally:
        kube.request("DELETE", f"/api/v1/namespaces/{CHART_NS}")


def _shell(env: dict[str, str]) -> Callable[[str], Run]:
    def run(command: str) -> Run:
        argv = ["bash", "-c", command]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)

    return run


def test_the_readme_walk_through(control_plane, namespace: str, kube: Kube, tmp_path: Path) -> None:
    assert readme_commands() == [c for c, _ in CHECKS]
    kc = _kubeconfig(Path(control_plane.kubeconfig), namespace, tmp_path / "kubeconfig")
    scripts, kubectl = Path(sys.executable).parent, ensure_binaries().kubectl.parent
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {
        "KUBECONFIG": str(kc),
        "PATH": f"{scripts}:{kubectl}:/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    shell = _shell(env)
    applied = shell(f"kubectl apply -f {REPO / 'examples' / 'agg.yaml'}")
    assert applied.returncode == 0, applied.stderr
    with (
        chart_service(kube, tmp_path / "tls") as flags,
        running_agent(control_plane.kubeconfig, *flags, namespace=namespace),
    ):
        wait_available(kube)
        wait_ready(kube, namespace, "qwen-agg", what="qwen-agg Ready on the real controllers")
        for command, check in CHECKS:
            eventually(
                lambda command=command, check=check: Shown(run := shell(command), check(run)),
                deadline=DEADLINE,
                what=f"README command `{command}` to show what it should",
            )
