"""The agent's Events (docs/lifecycle.md §4) as a user reads them: one per write still, the
similar ones of one reconcile written as one Event counting them."""

from __future__ import annotations

from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.kube import events_for
from tests.support.polling import eventually

DEADLINE = 60.0


def test_a_new_graph_reports_every_create_with_similar_ones_combined(
    control_plane, kube, namespace
):
    names = ("frontend", "decode", "prefill")
    kube.create(graph(namespace, "g", [component(n, n) for n in names]))
    reason = "CreateDynamoComponentDeployment"
    with running_agent(control_plane.kubeconfig, namespace=namespace):

        def reported() -> list[dict] | None:
            found = events_for(kube, namespace, "g", reason)
            return found if sum(e["count"] for e in found) >= len(names) else None

        events = eventually(reported, deadline=DEADLINE, what=f"{reason} events on g")
        for name in names:
            eventually(
                lambda name=name: events_for(kube, namespace, f"g-{name}", "CreateService"),
                deadline=DEADLINE,
                what=f"the CreateService event on g-{name}",
            )
    assert sum(e["count"] for e in events) == len(names)
    messages = " ".join(e["message"] for e in events)
    for name in names:
        assert f"Created DynamoComponentDeployment g-{name}" in messages
    assert len(events) < len(names)  # created in one reconcile: combined
