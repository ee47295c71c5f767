"""Issue 41 item 2 on a real API server: a graph whose pod template names the ServiceAccount
the agent runs as gets no workload; its component says why (status condition, Warning Event,
log line, each naming the object and the field) and the agent keeps serving other graphs."""

from __future__ import annotations

from typing import Any

from tests.support.agent import running_agent
from tests.support.fake_workloads import simulate_ready
from tests.support.graphs import component, graph
from tests.support.kube import DCD, Kube, events_for, ready_reason
from tests.support.polling import eventually

DEADLINE = 60.0
AGENT = "syncagent-sa"
FIELD = "spec.podTemplate.spec.serviceAccountName"


def _messages(obj: dict[str, Any] | None) -> list[str]:
    return [
        c.get("message") or "" for c in ((obj or {}).get("status") or {}).get("conditions") or ()
    ]


def test_a_pod_naming_the_agents_account_is_refused_and_others_converge(
    control_plane, kube: Kube, namespace: str
) -> None:
    bad = component("decode", "decode")
    bad["podTemplate"]["spec"]["serviceAccountName"] = AGENT
    kube.create(graph(namespace, "bad", [bad]))
    kube.create(graph(namespace, "good", [component("decode", "decode")]))
    ref = f"{DCD}/{namespace}/bad-decode"
    with running_agent(
        control_plane.kubeconfig, f"--service-account={namespace}/{AGENT}", namespace=namespace
    ) as agent:

        def good_ready() -> bool:
            simulate_ready(kube, namespace)
            return ready_reason(kube, namespace, "good") == "all_resources_are_ready"

        eventually(good_ready, deadline=DEADLINE, what="graph good to become Ready")

        def refused() -> list[str]:
            return [m for m in _messages(kube.get(DCD, namespace, "bad-decode")) if FIELD in m]

        message = eventually(refused, deadline=DEADLINE, what="the refusal on bad-decode")[0]
        assert f"{AGENT} is the ServiceAccount the agent runs as" in message
        eventually(
            lambda: [
                e
                for e in events_for(kube, namespace, "bad-decode", "ReconcileError")
                if FIELD in e["message"]
            ],
            deadline=DEADLINE,
            what="a ReconcileError Event naming the field",
        )
        assert f"{ref}: reconcile failed: {FIELD}" in agent.logs()
        assert kube.get("Deployment", namespace, "bad-decode") is None
