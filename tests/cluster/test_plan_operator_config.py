"""``syncagent plan --operator-config FILE`` plans as the agent given the same file applies:
unchanged against what that agent converged, changes without the file (its standard
environment would go)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from syncagent.cli.main import main
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.polling import eventually

CAPS = ["--capability", "grove=false"]  # as the test agent runs
CONFIG = {
    "infrastructure": {"natsAddress": "nats://nats.dynamo-system:4222"},
    "mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"},
    "rbac": {
        "plannerClusterRoleName": "planner",
        "dgdrProfilingClusterRoleName": "profiling",
        "eppClusterRoleName": "epp",
    },
}


def test_plan_reads_the_configuration_the_agent_runs_with(
    control_plane, namespace: str, kube, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = control_plane.kubeconfig
    doc = graph(namespace, "p", [component("frontend", "frontend"), component("decode", "worker")])
    graph_file = tmp_path / "graph.yaml"
    graph_file.write_text(yaml.safe_dump(doc))
    config = tmp_path / "operator-config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))

    def plan(*extra: str) -> int:
        args = ["plan", "-f", str(graph_file), "--kubeconfig", str(kc), *CAPS, *extra]
        code = main([*args, "-o", "json"])
        capsys.readouterr()
        return code

    kube.create(doc)
    with running_agent(kc, "--operator-config", str(config), namespace=namespace):
        eventually(
            lambda: plan("--operator-config", str(config)) == 0,
            deadline=60,
            what="the agent to converge the graph under the configuration",
        )
    assert plan() == 2  # without the file, NATS_SERVER would leave every main container
    assert main(["plan", "-f", str(graph_file), "--kubeconfig", str(kc), *CAPS]) == 2
    assert "NATS_SERVER" in capsys.readouterr().out
