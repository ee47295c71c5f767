"""``--operator-config FILE`` on ``render``, ``plan`` and ``run``: the file's discovery backend
is the default one, unused fields are named (stderr offline, a log line at start-up), and a
file upstream would refuse is one error naming the file and the field."""

from __future__ import annotations

import json
import logging

import pytest
import yaml

from syncagent.cli.main import main
from syncagent.cli.run.agent import startup_operator_config

VALID = {
    "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
    "kind": "OperatorConfiguration",
    "mpi": {"sshSecretName": "mpi-ssh", "sshSecretNamespace": "dynamo-system"},
    "rbac": {
        "plannerClusterRoleName": "planner",
        "dgdrProfilingClusterRoleName": "profiling",
        "eppClusterRoleName": "epp",
    },
}


def graph(tmp_path):
    container = {"name": "main", "image": "img:1", "args": ["--model", "m"]}
    body = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "x", "annotations": {"nvidia.com/enable-grove": "false"}},
        "spec": {
            "components": [
                {
                    "name": "decode",
                    "type": "decode",
                    "podTemplate": {"spec": {"containers": [container]}},
                }
            ]
        },
    }
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def config(tmp_path, **sections):
    path = tmp_path / "operator-config.yaml"
    path.write_text(yaml.safe_dump({**VALID, **sections}))
    return str(path)


def rendered_kinds(capsys):
    return [i["object"]["kind"] for i in json.loads(capsys.readouterr().out)]


def test_the_files_discovery_backend_is_the_default_and_the_flag_wins(tmp_path, capsys):
    etcd = config(tmp_path, discovery={"backend": "etcd"})
    assert main(["render", "-f", graph(tmp_path), "-o", "json", "--operator-config", etcd]) == 0
    assert "ServiceAccount" not in rendered_kinds(capsys)  # etcd: no discovery identity
    args = ["render", "-f", graph(tmp_path), "-o", "json", "--operator-config", etcd]
    assert main([*args, "--discovery-backend", "kubernetes"]) == 0
    assert "ServiceAccount" in rendered_kinds(capsys)
    assert main(["render", "-f", graph(tmp_path), "-o", "json"]) == 0  # upstream's default
    assert "ServiceAccount" in rendered_kinds(capsys)


def test_offline_commands_name_unused_fields_on_stderr(tmp_path, capsys):
    path = config(tmp_path, gpu={"discoveryEnabled": False}, bogus=1)
    assert main(["render", "-f", graph(tmp_path), "--operator-config", path]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"warning: {path}: unknown fields bogus: ")
    assert err[1].startswith(f"warning: {path}: syncagent does not use ")
    assert "gpu.discoveryEnabled" in err[1]
    assert "mpi.sshSecretName" in err[1]


@pytest.mark.parametrize("command", ["render", "plan"])
def test_a_file_upstream_refuses_is_one_error_naming_file_and_field(tmp_path, capsys, command):
    path = config(tmp_path, server={"metrics": {"port": 70000}})
    assert main([command, "-f", graph(tmp_path), "--operator-config", path]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"error: {path}: server.metrics.port: 70000 is not a port: set one between 0 and 65535; "
        "fix the file as upstream's OperatorConfiguration (docs/operatorconfig.md) and retry"
    ]


def test_a_missing_file_is_named(tmp_path, capsys):
    missing = str(tmp_path / "nope.yaml")
    assert main(["render", "-f", graph(tmp_path), "--operator-config", missing]) == 1
    assert capsys.readouterr().err.strip() == f"error: {missing}: no such file"


def test_the_agent_names_unused_fields_once_at_start_up(tmp_path, caplog):
    path = config(tmp_path, leaderElection={"enabled": True, "id": "dynamo"})
    with caplog.at_level(logging.WARNING, logger="syncagent.cli.run.agent"):
        loaded = startup_operator_config(path)
    assert loaded.config.discovery.backend == "kubernetes"
    records = [r for r in caplog.records if r.name == "syncagent.cli.run.agent"]
    assert len(records) == 1
    assert records[0].getMessage() == "operator configuration fields unused"
    assert records[0].file == path
    assert "leaderElection.enabled, leaderElection.id" in records[0].detail


def test_the_agent_without_a_file_logs_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="syncagent.cli.run.agent"):
        loaded = startup_operator_config(None)
    assert loaded.config.gpu.discovery_enabled is True
    assert [r for r in caplog.records if r.name == "syncagent.cli.run.agent"] == []
