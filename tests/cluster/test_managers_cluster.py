"""``syncagent managers`` against the test API server: a converged graph's objects match the
field-manager contracts; a user's ``kubectl label`` is theirs (no finding); what the upstream
operator wrote is named as a stale finding (a takeover adopts it)."""

from __future__ import annotations

import orjson
import pytest

from syncagent.cli.main import main
from syncagent.render.naming import dcd_name
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.polling import eventually


def _managers(kubeconfig, namespace: str, capsys) -> tuple[int, dict]:
    code = main(["managers", "m", "-n", namespace, "--kubeconfig", str(kubeconfig), "-o", "json"])
    return code, orjson.loads(capsys.readouterr().out or "{}")


def test_contracts_hold_until_someone_else_writes(
    control_plane, namespace: str, kube, kubectl, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = control_plane.kubeconfig
    kube.create(graph(namespace, "m", [component("frontend", "frontend")]))
    deployment = dcd_name("m", "frontend")
    with running_agent(kc, namespace=namespace):
        eventually(
            lambda: kube.get("Deployment", namespace, deployment),
            deadline=60,
            what="the agent to create the Deployment",
        )
        code, doc = eventually(
            lambda: (result := _managers(kc, namespace, capsys))[0] == 0 and result,
            deadline=60,
            what="a converged graph with no findings",
        )
    subjects = {o["object"] for o in doc["objects"]}
    assert f"Deployment/{namespace}/{deployment}" in subjects
    assert all(o["managedFieldsBytes"] > 0 for o in doc["objects"])

    kubectl.label(f"deployments.apps/{deployment}", "x=y")
    code, doc = _managers(kc, namespace, capsys)
    assert code == 0, doc  # a user's label is theirs: nothing stale, nothing to adopt
    kube.merge(
        "Deployment",
        namespace,
        deployment,
        {"spec": {"revisionHistoryLimit": 3}},
        manager="manager",  # as the upstream Dynamo operator writes
    )
    code, doc = _managers(kc, namespace, capsys)
    assert code == 2
    found = [
        f
        for o in doc["objects"]
        if o["object"] == f"Deployment/{namespace}/{deployment}"
        for f in o["findings"]
    ]
    assert [(f["kind"], f["manager"]) for f in found] == [("stale", "manager")]
