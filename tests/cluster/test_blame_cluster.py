"""``syncagent blame`` against the test API server: owners per line, co-owners, bad input."""

from __future__ import annotations

import orjson
import pytest

from syncagent.cli.main import main
from tests.support.kube import Kube


def _apply(kube: Kube, ns: str, manager: str, labels: dict[str, str]) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": ns, "labels": labels},
        "spec": {"ports": [{"port": 8000, "protocol": "TCP"}], "selector": {"app": "web"}},
    }
    kube.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}/services/web",
        body,
        content_type="application/apply-patch+yaml",
        fieldManager=manager,
    )


def test_owners_and_co_owners(
    control_plane, namespace: str, kube, capsys: pytest.CaptureFixture[str]
) -> None:
    _apply(kube, namespace, "team-a", {"shared": "1", "a": "1"})
    _apply(kube, namespace, "team-b", {"shared": "1"})
    argv = ["blame", "svc/web", "-n", namespace, "--kubeconfig", str(control_plane.kubeconfig)]
    assert main([*argv, "-o", "json"]) == 0
    lines = {d["path"]: d for d in orjson.loads(capsys.readouterr().out)}
    shared = lines[".metadata.labels.shared"]["owners"]
    assert {(o["manager"], o["operation"]) for o in shared} == {
        ("team-a", "Apply"),
        ("team-b", "Apply"),
    }
    assert [o["manager"] for o in lines[".metadata.labels.a"]["owners"]] == ["team-a"]
    assert ".spec.ports[port=8000,protocol=TCP]" in lines
    assert main(argv) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.rstrip().endswith("shared: '1'"))
    assert line.startswith("team-a,team-b") or line.startswith("team-b,team-a")
    assert "# [port=8000,protocol=TCP]" in text


def test_unknown_kind_is_one_line(
    control_plane, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["blame", "widget/x", "-n", namespace, "--kubeconfig", str(control_plane.kubeconfig)]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1
    assert "widget" in err[0]
    assert "no resource type" in err[0]
