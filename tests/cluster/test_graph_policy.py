"""Issue 41 items 1 and 2 on a real API server: the chart's graph policy holds every pod
template of a DGD or DCD to the Pod Security level the values select, found by the resource's
kind (a DCD's ``spec.components: []`` does not hide its podTemplate), with the exceptions a
platform team grants; it refuses a graph naming the agent's ServiceAccount in the release
namespace; every refusal names the object and the field. The shipped examples are admitted."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import yaml
from lightkube import Client

from syncagent.devcluster import ControlPlane
from tests.cluster.support.graph_policy import (
    BASELINE,
    RESTRICTED,
    Change,
    bad_component,
    bad_graph,
    hardened,
    policy_release,
    refusal,
)
from tests.support.graphs import component, graph
from tests.support.kube import Kube

DEADLINE = 60.0
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GRANTED = (
    "graphPolicy.exceptions.capabilities={IPC_LOCK}",
    "graphPolicy.exceptions.hostPathPrefixes={/dev/infiniband/}",
)


def _policy(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path, *sets: str
) -> contextlib.AbstractContextManager[str]:
    return policy_release(
        control_plane,
        client,
        kube,
        tmp_path,
        *sets,
        probe=lambda ns: bad_graph(ns, "probe", BASELINE[5][1]),
        prefix="p",
        labels={"syncagent-test": "1"},
    )


def _both(ns: str, name: str, change: Change) -> list[tuple[dict[str, Any], str]]:
    """A DGD and a DCD carrying ``change``, each with the path its refusal must name."""
    return [
        (bad_graph(ns, name, change), "spec.components[Frontend].podTemplate.spec."),
        (bad_component(ns, name, change), "spec.podTemplate.spec."),
    ]


def _largest(ns: str) -> dict[str, Any]:
    """25 components (the CRD's maximum), each with 32 containers and 32 volumes."""
    components = []
    for i in range(25):
        c = component(f"c{i}", "decode")
        spec = c["podTemplate"]["spec"]
        main = spec["containers"][0]
        sidecar = {"securityContext": {"capabilities": {"add": ["CHOWN"]}}}
        spec["containers"] += [dict(main, name=f"s{j}", **sidecar) for j in range(31)]
        spec["volumes"] = [{"name": f"v{j}", "emptyDir": {}} for j in range(32)]
        components.append(c)
    return graph(ns, "largest", components)


def _assert_refused(kube: Kube, cases: list[tuple[str, Change, str]], ns: str, level: str) -> None:
    for name, change, field in cases:
        for doc, path in _both(ns, name, change):
            message = refusal(kube, doc)
            assert message is not None, f"{doc['kind']} {name}: admitted"
            assert f"denied request: {doc['kind']}/{ns}/{name}: {path}" in message, message
            assert field in message, message
            assert f"syncagent graph policy ({level}) refuses" in message, message


def test_baseline_refuses_every_control_on_graphs_and_components(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path
) -> None:
    with _policy(control_plane, client, kube, tmp_path) as ns:
        _assert_refused(kube, BASELINE, ns, "baseline")
        # A DCD's unknown spec.components does not hide its podTemplate from the policy.
        hidden = bad_component(ns, "hidden", BASELINE[5][1])
        hidden["spec"]["components"] = []
        message = refusal(kube, hidden)
        assert message is not None
        assert "spec.podTemplate.spec.containers" in message, message
        # The agent's own ServiceAccount, in the release namespace.
        for doc, path in _both(
            ns, "as-agent", lambda t: t["spec"].update(serviceAccountName=f"{ns}-syncagent")
        ):
            message = refusal(kube, doc)
            assert message is not None
            assert f"{path}serviceAccountName names the ServiceAccount the agent runs as" in message
            assert f"({ns}-syncagent)" in message
        # Plain pod templates and the shipped examples are admitted.
        for doc, _ in _both(ns, "clean", lambda t: None):
            assert refusal(kube, doc) is None
        # The largest graph the CRD allows stays within CEL's runtime cost budget.
        assert refusal(kube, _largest(ns)) is None
        for path in sorted(EXAMPLES.glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                doc["metadata"]["namespace"] = ns
                assert refusal(kube, doc) is None, path.name


def test_restricted_refuses_its_controls_and_admits_the_granted_exceptions(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path
) -> None:
    with _policy(
        control_plane, client, kube, tmp_path, "graphPolicy.level=restricted", *GRANTED
    ) as ns:

        def restricted(change: Change) -> Change:
            return lambda t: (hardened(t), change(t))[-1]

        _assert_refused(kube, [(n, restricted(c), f) for n, c, f in RESTRICTED], ns, "restricted")

        def granted(t: dict[str, Any]) -> None:
            hardened(t)
            t["spec"]["containers"][0]["securityContext"]["capabilities"]["add"] = ["IPC_LOCK"]
            t["spec"]["volumes"] = [{"name": "ib", "hostPath": {"path": "/dev/infiniband/uverbs0"}}]

        for doc, _ in _both(ns, "granted", granted):
            assert refusal(kube, doc) is None, doc["kind"]
        for escape in ("/dev/infiniband/../../etc", "/dev/infinibandx", "/dev"):

            def outside(t: dict[str, Any], path: str = escape) -> None:
                granted(t)
                t["spec"]["volumes"][0]["hostPath"]["path"] = path

            for doc, _ in _both(ns, "outside", outside):
                message = refusal(kube, doc)
                assert message is not None, escape
                assert "granted: /dev/infiniband" in message, message
