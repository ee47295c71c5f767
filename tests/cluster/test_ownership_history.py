"""Ownership history on the real API server: the agent (a host process) records who took which
field from whom, and ``syncagent blame --history`` reads it through the service proxy, with the
real ``kubectl`` as the other writer (``scale``, ``label``, ``apply --server-side``), before and
after an agent restart (docs/ownership.md §6)."""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Any

import orjson
import pytest
import yaml

from syncagent.cli.main import main
from tests.cluster.support.chart_identity import token_kubeconfig
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.helm import CHART, Helm
from tests.support.history import expose, free_port, host_address
from tests.support.kubectl import Kubectl
from tests.support.polling import eventually

DEADLINE = 60.0
SERVICE = "agent-history"
DEPLOY = "hist-frontend"
OURS = "syncagent/workloads"
REPLICAS = ".spec.replicas"


def blame_history(
    capsys: pytest.CaptureFixture[str], kubeconfig: Any, ns: str, *extra: str
) -> dict[str, Any]:
    argv = ["blame", f"deploy/{DEPLOY}", "--history", "-n", ns, "--kubeconfig", str(kubeconfig)]
    code = main([*argv, "--agent-service", f"{ns}/{SERVICE}", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return orjson.loads(out) if "-o" in extra else {"text": out}


def field(doc: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return next((f["steps"] for f in doc["fields"] if f["path"] == path), [])


def managers(steps: list[dict[str, Any]]) -> list[list[str]]:
    return [sorted(o["manager"] for o in s["owners"]) for s in steps]


def scale_and_wait_back(kubectl: Kubectl, kube: Any, ns: str) -> None:
    """``kubectl scale`` takes replicas; the agent puts its value back (a forced apply)."""
    kubectl("scale", f"deployment/{DEPLOY}", "--replicas=3")
    eventually(
        lambda: kube.get("Deployment", ns, DEPLOY)["spec"]["replicas"] == 1,
        deadline=DEADLINE,
        what="the agent to put replicas back",
    )


def test_blame_history_shows_each_flip_and_where_it_begins_after_a_restart(
    control_plane, kube, namespace, kubectl, capsys
):
    address = host_address()
    port = free_port(address)
    expose(kube, namespace, SERVICE, address, port)
    flags = ("--history-bind-address", f"{address}:{port}")
    kube.create(graph(namespace, "hist", [component("Frontend", "frontend")]))
    read = lambda *extra: blame_history(capsys, control_plane.kubeconfig, namespace, *extra)  # noqa: E731
    with running_agent(control_plane.kubeconfig, *flags, namespace=namespace):
        eventually(
            lambda: kube.get("Deployment", namespace, DEPLOY),
            deadline=DEADLINE,
            what="the agent to create the Deployment",
        )
        scale_and_wait_back(kubectl, kube, namespace)
        kubectl.label(f"deployment/{DEPLOY}", "team=a")
        ssa = f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {DEPLOY}\n  labels:\n    cost: x\n"
        kubectl("apply", "--server-side", "--field-manager=x", "-f", "-", stdin=ssa)

        def recorded() -> dict[str, Any] | None:
            doc = read("-o", "json")
            done = len(field(doc, REPLICAS)) == 3 and field(doc, ".metadata.labels.cost")
            return doc if done and field(doc, ".metadata.labels.team") else None

        doc = eventually(recorded, deadline=DEADLINE, what="the history of all three writers")
        assert doc["begins"] == "created"  # by this agent: it saw every change since
        flips = field(doc, REPLICAS)
        assert managers(flips)[0] == [OURS]
        taker = flips[1]["owners"]
        assert [(o["operation"], o["subresource"]) for o in taker] == [("Update", "scale")]
        assert taker[0]["manager"].startswith("kubectl")
        assert managers(flips)[2] == [OURS]
        assert [(s.get("before"), s.get("after")) for s in flips[1:]] == [("1", "3"), ("3", "1")]
        assert managers(field(doc, ".metadata.labels.team")) == [[], ["kubectl-label"]]
        assert managers(field(doc, ".metadata.labels.cost")) == [[], ["x"]]
        text = read()["text"]
        assert "when the object was created" in text
        assert re.search(rf"Z  {taker[0]['manager']} \(Update/scale\) +1 -> 3\n", text), text
    # Creation times are whole seconds, and an object created in the second the history began
    # counts as created (docs/ownership.md §6): restart in a later second, or the restarted
    # agent's history would rightly begin at the creation.
    created = datetime.fromisoformat(
        kube.get("Deployment", namespace, DEPLOY)["metadata"]["creationTimestamp"]
    ).timestamp()
    eventually(lambda: time.time() >= created + 1.0, deadline=3, what="a second after the create")
    restarted = time.time()
    with running_agent(control_plane.kubeconfig, *flags, namespace=namespace):
        after = eventually(
            lambda: read("-o", "json"), deadline=DEADLINE, what="the restarted agent's history"
        )
        assert after["begins"] == "agent-start"
        assert after["fields"] == []  # what the first agent saw is gone with it
        assert after["since"] >= time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(restarted - 1))
        scale_and_wait_back(kubectl, kube, namespace)

        def flipped() -> dict[str, Any] | None:
            doc = read("-o", "json")
            return doc if len(field(doc, REPLICAS)) == 3 else None

        again = eventually(
            flipped,
            deadline=DEADLINE,
            what="the flip after the restart",
        )
        assert managers(field(again, REPLICAS))[::2] == [[OURS], [OURS]]
        assert again["since"] == after["since"]


def _reader_kubeconfig(control_plane, kube, ns: str, tmp_path) -> Any:
    """A ServiceAccount that may get Deployments of ``ns``, and nothing of the agent's."""
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "reader", "namespace": ns},
        }
    )
    rule = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}
    kube.create({**role, "metadata": {"name": "reader", "namespace": ns}, "rules": [rule]})
    _bind(kube, ns, "Role", "reader")
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    path = f"/api/v1/namespaces/{ns}/serviceaccounts/reader/token"
    token = kube.request("POST", path, request)["status"]["token"]
    return token_kubeconfig(control_plane, token, tmp_path / "reader.kubeconfig")


def _bind(kube, ns: str, kind: str, role: str) -> None:
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": f"reader-{role}", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}],
        }
    )


def _chart_reader_role(control_plane, ns: str, tmp_path) -> dict[str, Any]:
    """The chart's history-reader ClusterRole, rendered for release ``ns``."""
    rendered = Helm(control_plane, tmp_path)(
        "template", ns, str(CHART), "-n", ns, "--show-only", "templates/history.yaml"
    )
    return next(d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "ClusterRole")


@pytest.mark.helm
def test_reading_the_history_takes_the_charts_reader_role(
    control_plane, kube, namespace, capsys, tmp_path
):
    role = _chart_reader_role(control_plane, namespace, tmp_path)
    service = f"{namespace}-syncagent-history"  # what the chart names it for this release
    address = host_address()
    port = free_port(address)
    expose(kube, namespace, service, address, port)
    kube.create(plain_deployment(namespace, DEPLOY))
    config = _reader_kubeconfig(control_plane, kube, namespace, tmp_path)
    argv = ["blame", f"deploy/{DEPLOY}", "--history", "-n", namespace]
    argv += ["--kubeconfig", str(config), "--agent-service", f"{namespace}/{service}"]
    flags = ("--history-bind-address", f"{address}:{port}")
    with running_agent(control_plane.kubeconfig, *flags, namespace=namespace):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: Deployment/{namespace}/{DEPLOY}: Service/{namespace}/")
        assert "HTTP 403" in err
        assert "history-reader" in err
        kube.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
        try:
            _bind(kube, namespace, "ClusterRole", role["metadata"]["name"])

            def allowed() -> str | None:
                code = main(argv)
                out, err = capsys.readouterr()
                if code != 0 and "HTTP 403" not in err:  # anything but "not yet" is a failure
                    raise AssertionError(err)
                return out if code == 0 else None

            text = eventually(allowed, deadline=DEADLINE, what="the reader role to take effect")
        finally:
            kube.request(
                "DELETE",
                f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{role['metadata']['name']}",
            )
    assert text.startswith(f"Deployment/{namespace}/{DEPLOY}: ownership history since ")
    assert "No field changed hands." in text


def plain_deployment(ns: str, name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            },
        },
    }
