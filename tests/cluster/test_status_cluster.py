"""``syncagent status`` against the test API server, the agent running: the tree of a converged
Component graph as a namespace reader sees it (``--as``), checked against the objects the
server holds; ``-w`` in a real pseudo-terminal redraws in place when an object changes."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

import orjson
import pytest
import yaml

from syncagent.cli.main import main
from syncagent.render.naming import dcd_name
from tests.cluster.support.terminal import Terminal
from tests.support.agent import running_agent
from tests.support.fake_workloads import become_ready
from tests.support.graphs import component, graph
from tests.support.kube import Kube
from tests.support.polling import eventually

READ_RULES = [
    {"apiGroups": [""], "resources": ["pods", "services", "events"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "replicasets", "statefulsets"]},
    {
        "apiGroups": ["nvidia.com"],
        "resources": ["dynamographdeployments", "dynamocomponentdeployments"],
    },
    {"apiGroups": ["leaderworkerset.x-k8s.io"], "resources": ["leaderworkersets"]},
    {"apiGroups": ["disaggregatedset.x-k8s.io"], "resources": ["disaggregatedsets"]},
    {
        "apiGroups": ["grove.io"],
        "resources": ["podcliquesets", "podcliques", "podcliquescalinggroups"],
    },
]
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def colours(text: str) -> set[int]:
    """The colour parameters (foreground, background) of the text's SGR sequences."""
    params = {int(p) for m in SGR.finditer(text) for p in m.group(1).split(";") if p}
    return {p for p in params if 30 <= p <= 49 or 90 <= p <= 107}


def reader(kube: Kube, ns: str, name: str = "reader") -> str:
    """A ServiceAccount with get, list and watch on the tree's kinds in ``ns`` only."""
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}"
    kube.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": name}})
    rules = [{**r, "verbs": ["get", "list", "watch"]} for r in READ_RULES]
    kube.request("POST", f"{rbac}/roles", {"metadata": {"name": name}, "rules": rules})
    binding = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
    }
    kube.request("POST", f"{rbac}/rolebindings", binding)
    return f"system:serviceaccount:{ns}:{name}"


def _status(kc, ns: str, capsys, *args: str, name: str = "s") -> tuple[int, dict[str, Any], str]:
    code = main(["status", name, "-n", ns, "--kubeconfig", str(kc), "-o", "json", *args])
    out = capsys.readouterr()
    return code, orjson.loads(out.out or "{}"), out.err


def _nodes(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {f"{tree['kind']}/{tree['name']}": tree}
    for child in tree["children"]:
        out |= _nodes(child)
    return out


def _controlled(kube: Kube, ns: str, root: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What the server holds under ``root`` by controller references, by Kind/name."""
    everything = [
        {**o, "kind": kind}
        for kind in ("DynamoComponentDeployment", "Deployment", "Service")
        for o in kube.list(kind, ns)
    ]
    found, uids = {}, {root["metadata"]["uid"]}
    while True:
        more = {
            f"{o['kind']}/{o['metadata']['name']}": o
            for o in everything
            if any(
                r.get("controller") and r["uid"] in uids
                for r in o["metadata"].get("ownerReferences", [])
            )
        }
        if more.keys() <= found.keys():
            return found
        found |= more
        uids |= {o["metadata"]["uid"] for o in more.values()}


def _controller(obj: dict[str, Any]) -> str:
    refs = [r for r in obj["metadata"].get("ownerReferences", []) if r.get("controller")]
    return f"{refs[0]['kind']}/{refs[0]['name']}" if refs else ""


def test_tree_of_a_converged_graph_matches_the_cluster(
    control_plane, namespace: str, kube, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = control_plane.kubeconfig
    kube.create(
        graph(
            namespace,
            "s",
            [component("frontend", "frontend"), component("worker", "worker", replicas=2)],
        )
    )
    user = reader(kube, namespace)
    with running_agent(kc, namespace=namespace):
        become_ready(kube, namespace, "s")
        code, doc, err = _status(kc, namespace, capsys, "--as", user)
    assert code == 0, err
    assert doc["schema"] == "syncagent.dynamo.nvidia.com/status-v1"
    assert doc["ready"] is True
    nodes = _nodes(doc["tree"])
    live_graph = kube.get("DynamoGraphDeployment", namespace, "s")
    program = doc["tree"]["children"][0]
    assert (program["kind"], program["name"]) == (
        "Program",
        live_graph["status"]["routing"]["pathway"],
    )
    expected = _controlled(kube, namespace, live_graph)
    assert expected.keys() == nodes.keys() - {
        "DynamoGraphDeployment/s",
        program["kind"] + "/" + program["name"],
    }
    for ref, obj in [("DynamoGraphDeployment/s", live_graph), *expected.items()]:
        node = nodes[ref]
        assert node["controller"] == _controller(obj), ref
        assert [m["manager"] for m in node["managers"]] == [
            e["manager"] for e in obj["metadata"]["managedFields"]
        ], ref
        if obj["kind"] != "Service":
            assert node["ready"] is True, node
    for comp in ("frontend", "worker"):
        service = nodes[f"Service/{dcd_name('s', comp)}"]
        assert service["selects"] == [f"Deployment/{dcd_name('s', comp)}"], service

    # -o yaml is the same document.
    assert main(["status", "s", "-n", namespace, "--kubeconfig", str(kc), "-o", "yaml"]) == 0
    as_yaml = yaml.safe_load(capsys.readouterr().out)
    assert as_yaml["tree"] == doc["tree"]
    # A graph that is not there: one line, exit 1.
    code, _, err = _status(kc, namespace, capsys, "--as", user, name="absent")
    assert code == 1
    assert err.strip() == (
        f"error: DynamoGraphDeployment/{namespace}/absent: not found in namespace {namespace}; "
        "check the name and -n/--namespace"
    )

    # Someone without the rights: one line naming what to grant.
    code, _, err = _status(
        kc, namespace, capsys, "--as", f"system:serviceaccount:{namespace}:nobody"
    )
    assert code == 1
    [line] = err.strip().splitlines()
    assert line.startswith("error: DynamoGraphDeployment in namespace")
    assert "get, list and watch" in line


def test_watch_redraws_in_place_on_a_change(control_plane, namespace: str, kube) -> None:
    kc = control_plane.kubeconfig
    kube.create(graph(namespace, "s", [component("frontend", "frontend")]))
    deployment = dcd_name("s", "frontend")
    argv = [
        sys.executable,
        "-m",
        "syncagent.cli.main",
        "status",
        "s",
        "-n",
        namespace,
        "--kubeconfig",
        str(kc),
    ]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    with running_agent(kc, namespace=namespace):
        become_ready(kube, namespace, "s")
        with Terminal(argv, env={**env, "NO_COLOR": "1"}) as plain:
            assert plain.wait() == 0
        assert f"Deployment/{deployment}" in plain.output()
        assert not colours(plain.output())  # NO_COLOR: no colour even on a terminal
        with Terminal([*argv, "-w"], env=env) as term:
            first = eventually(
                lambda: "1/1 ready" in term.output() and term.output(),
                deadline=60,
                what="the first frame",
            )
            assert colours(first)  # colour on a terminal
            kube.merge(
                "Deployment",
                namespace,
                deployment,
                {"status": {"readyReplicas": 0, "availableReplicas": 0}},
                sub="status",
                manager="test-kubelet",
            )
            eventually(
                lambda: "0/1 ready" in term.output()[len(first) :],
                deadline=60,
                what="a redraw with the Deployment not ready",
            )
            redraw = term.output()[len(first) :]
            # In place: the frame is redrawn over the previous one (cursor moved up), not appended.
            assert re.search(r"\x1b\[\d*A", redraw), redraw
            assert "why: 0 of 1 replicas ready" in redraw
            assert term.interrupt() == 130
