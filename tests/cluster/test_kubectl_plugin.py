"""``kubectl syncagent ...``: the real kubectl finds the installed ``kubectl-syncagent`` on PATH
and runs every inspect command through it, with kubectl's global flags (``--kubeconfig``,
``--context``, ``-n``) before or after the command, and ``$KUBECONFIG`` as kubectl reads it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import yaml

from syncagent.devcluster.build import ensure_binaries
from syncagent.render.naming import dcd_name
from tests.support.agent import running_agent
from tests.support.fake_workloads import become_ready
from tests.support.graphs import component, graph


def _plugin_dir() -> Path:
    # The console script pip installs beside the interpreter (pip install -e '.[test]').
    found = shutil.which("kubectl-syncagent", path=str(Path(sys.executable).parent))
    assert found, f"kubectl-syncagent is not installed in {Path(sys.executable).parent}"
    return Path(found).parent


def _kubectl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ensure_binaries().kubectl), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def test_kubectl_runs_the_plugin(control_plane, namespace: str, kube, tmp_path: Path) -> None:
    kc = str(control_plane.kubeconfig)
    context = yaml.safe_load(Path(kc).read_text())["current-context"]
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "PATH")} | {
        "PATH": f"{_plugin_dir()}:/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    listed = _kubectl("plugin", "list", env=env)
    assert f"{_plugin_dir()}/kubectl-syncagent" in listed.stdout, listed

    doc = graph(namespace, "k", [component("frontend", "frontend")])
    kube.create(doc)
    (tmp_path / "graph.yaml").write_text(yaml.safe_dump(doc))
    deployment = dcd_name("k", "frontend")
    with running_agent(kc, namespace=namespace):
        become_ready(kube, namespace, "k")
        # Global flags before the command, as kubectl users write them.
        status = _kubectl(
            "syncagent", "--kubeconfig", kc, "-n", namespace, "status", "k", "-o", "json", env=env
        )
        # $KUBECONFIG and --context after the command.
        with_env = env | {"KUBECONFIG": kc}
        managers = _kubectl(
            "syncagent", "managers", "k", "--context", context, "-n", namespace, env=with_env
        )
        blame = _kubectl(
            "syncagent",
            "blame",
            f"deployment/{deployment}",
            f"--namespace={namespace}",
            env=with_env,
        )
        conflicts = _kubectl("syncagent", "conflicts", "k", "-n", namespace, env=with_env)
        plan = _kubectl(
            "syncagent",
            "plan",
            "-f",
            str(tmp_path / "graph.yaml"),
            "--capability",
            "grove=false",
            env=with_env,
        )  # as the test agent runs
        wrong = _kubectl("syncagent", "status", "k", "--context", "absent", env=with_env)

    assert status.returncode == 0, status.stderr
    tree = orjson.loads(status.stdout)["tree"]
    assert (tree["kind"], tree["name"]) == ("DynamoGraphDeployment", "k")
    assert managers.returncode == 0, managers.stdout + managers.stderr
    assert f"Deployment/{namespace}/{deployment}" in managers.stdout
    assert blame.returncode == 0, blame.stderr
    assert "syncagent/workloads" in blame.stdout
    assert conflicts.returncode == 0, conflicts.stdout + conflicts.stderr
    assert plan.returncode == 0, plan.stdout + plan.stderr  # converged: nothing to change
    assert wrong.returncode == 1
    [line] = wrong.stderr.strip().splitlines()
    assert line.startswith("error: kubeconfig ")
    assert "absent" in line
