"""``--operator-config FILE`` on ``render``, ``plan`` and ``run``: the file's discovery backend
is the default one, unused fields are named (stderr offline, a log line at start-up), and a
file upstream would refuse is one error naming the file and the field."""

from __future__ import annotations

import json
import logging

import pytest
import yaml

from syncagent.cli.main import main
from syncagent.cli.pathways import PROGRAMS
from syncagent.cli.run.agent import startup_operator_config
from tests.support.graphs import frontend, worker

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


INFRASTRUCTURE = {
    "natsAddress": "nats://nats.dynamo:4222",
    "etcdAddress": "http://etcd.dynamo:2379",
    "modelExpressURL": "http://model-express.dynamo:8080",
    "prometheusEndpoint": "http://prometheus.monitoring:9090",
}
STANDARD = {
    "NATS_SERVER": "nats://nats.dynamo:4222",
    "ETCD_ENDPOINTS": "http://etcd.dynamo:2379",
    "MODEL_EXPRESS_URL": "http://model-express.dynamo:8080",
    "PROMETHEUS_ENDPOINT": "http://prometheus.monitoring:9090",
}


def pod_mains(value):
    """Every ``main`` container of a pod template anywhere in ``value``."""
    if isinstance(value, dict):
        for c in value.get("containers") or []:
            if isinstance(c, dict) and c.get("name") == "main":
                yield c
        for child in value.values():
            yield from pod_mains(child)
    elif isinstance(value, list):
        for child in value:
            yield from pod_mains(child)


@pytest.mark.parametrize("program", sorted(PROGRAMS.names))
def test_every_pathway_gives_every_main_container_the_standard_environment(
    tmp_path, capsys, program
):
    components = [frontend(), worker("decode", "decode"), worker("prefill", "prefill")]
    path = tmp_path / "g.yaml"
    body = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {"components": components},
    }
    path.write_text(yaml.safe_dump(body))
    cfg = config(tmp_path, infrastructure=INFRASTRUCTURE)
    args = ["render", "-f", str(path), "-o", "json", "--program", program]
    assert main([*args, "--operator-config", cfg]) == 0
    items = json.loads(capsys.readouterr().out)
    # the DCDs carry the graph's spec; the pods their workloads render get the environment
    mains = [
        m
        for i in items
        if i["object"]["kind"] != "DynamoComponentDeployment"
        for m in pod_mains(i["object"])
    ]
    assert len(mains) >= 3
    for container in mains:
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert {k: env.get(k) for k in STANDARD} == STANDARD
    assert main(args) == 0  # without the file: none of them
    items = json.loads(capsys.readouterr().out)
    for container in [m for i in items for m in pod_mains(i["object"])]:
        assert not set(STANDARD) & {e["name"] for e in container.get("env") or []}
