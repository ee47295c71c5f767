"""``syncagent conflicts`` against the test API server: another manager's change shows up with
that manager's name, our value, the live value and a remedy; nothing is written."""

from __future__ import annotations

import orjson
import pytest

from syncagent.cli.main import main
from syncagent.render.naming import dcd_name
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.polling import eventually

CAPS = ["--capability", "grove=false"]


def _conflicts(kubeconfig, namespace: str, name: str, capsys) -> tuple[int, dict]:
    code = main(
        ["conflicts", name, "-n", namespace, "--kubeconfig", str(kubeconfig), "-o", "json", *CAPS]
    )
    return code, orjson.loads(capsys.readouterr().out or "{}")


def test_field_changed_by_another_manager(
    control_plane, namespace: str, kube, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = control_plane.kubeconfig
    kube.create(graph(namespace, "c", [component("frontend", "frontend")]))
    deployment = dcd_name("c", "frontend")
    with running_agent(kc, namespace=namespace):
        eventually(
            lambda: kube.get("Deployment", namespace, deployment),
            deadline=60,
            what="the agent to create the Deployment",
        )
        eventually(
            lambda: _conflicts(kc, namespace, "c", capsys)[0] == 0,
            deadline=60,
            what="a converged graph without conflicts",
        )
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "other:1"}]}}}}
    kube.request(
        "PATCH",
        kube.path("Deployment", namespace, deployment),
        patch,
        content_type="application/strategic-merge-patch+json",
        fieldManager="other-team",
    )
    before = kube.get("Deployment", namespace, deployment)
    code, doc = _conflicts(kc, namespace, "c", capsys)
    assert code == 2
    rows = [r for r in doc["conflicts"] if r["manager"] == "other-team"]
    assert [r["path"] for r in rows] == [".spec.template.spec.containers[name=main].image"]
    row = rows[0]
    assert row["object"] == f"Deployment/{namespace}/{deployment}"
    assert row["operation"] == "Update"
    assert row["live"] == '"other:1"'
    assert row["ours"] == '"nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"'
    assert row["ourManager"] == "syncagent/workloads"
    assert row["remedy"] == "force"
    after = kube.get("Deployment", namespace, deployment)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]

    code = main(["conflicts", "c", "-n", namespace, "--kubeconfig", str(kc), *CAPS])
    text = capsys.readouterr().out
    assert code == 2
    assert "other-team" in text
    assert "yield" in text


def test_missing_graph_is_one_line(
    control_plane, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["conflicts", "nope", "-n", namespace, "--kubeconfig", str(control_plane.kubeconfig)]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err == [
        f"error: DynamoGraphDeployment/{namespace}/nope: not found in namespace {namespace}; "
        "check the name and -n/--namespace"
    ]
