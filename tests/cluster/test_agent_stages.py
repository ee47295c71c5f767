"""Where a change's time goes (docs/runtime.md §2b): after one edit of a converged graph, every
stage histogram of the path from the edit to the graph's status has new observations. Their
values are the bench's business (bench/latency.py), not a test's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.agent import Agent, Metrics, running_agent
from tests.support.fake_workloads import become_ready
from tests.support.graphs import component, graph
from tests.support.kube import DGD, Kube
from tests.support.polling import eventually

DEADLINE = 60.0
# (histogram, labels): each must count one more observation after the edit.
MOVED = (
    ("syncagent_graph_watch_delay_seconds", {}),
    ("syncagent_graph_change_to_status_seconds", {}),
    ("syncagent_workqueue_queue_duration_seconds", {"queue": "dgd"}),
    ("syncagent_workqueue_queue_duration_seconds", {"queue": "dcd"}),
    ("syncagent_workqueue_coalesce_seconds", {"queue": "dgd"}),
    *(
        ("syncagent_reconcile_stage_seconds", {"controller": c, "stage": s})
        for c in ("dgd", "dcd")
        for s in ("render", "write", "status_write")
    ),
)


def _counts(m: Metrics) -> dict[str, float]:
    return {f"{name}{labels}": m.sum(f"{name}_count", **labels) for name, labels in MOVED}


def _observed(kube: Kube, ns: str, generation: int) -> bool:
    return ((kube.get(DGD, ns, "g") or {}).get("status") or {}).get(
        "observedGeneration"
    ) == generation


def _settled(agent: Agent) -> Callable[[], dict[str, float] | None]:
    """A check: the stage counts, once two looks in a row saw the same reconciles and no key
    waiting (what becoming Ready set off has finished and moves no count afterwards)."""
    last: list[float] = []

    def check() -> dict[str, float] | None:
        m = agent.scrape()
        done = m.sum("syncagent_reconcile_total")
        still = m.sum("syncagent_workqueue_depth") == 0 and last[-1:] == [done]
        last.append(done)
        return _counts(m) if still else None

    return check


def test_one_edit_moves_every_stage_of_its_path(control_plane, kube, namespace):
    kube.create(graph(namespace, "g", [component("frontend", "frontend")]))
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        become_ready(kube, namespace, "g")
        before = eventually(_settled(agent), deadline=DEADLINE, what="the agent idle", interval=1.5)

        def edit(g: dict[str, Any]) -> None:
            g["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["image"] = "x:2"

        generation = kube.edit_graph(namespace, "g", edit)["metadata"]["generation"]
        eventually(
            lambda: _observed(kube, namespace, generation),
            deadline=DEADLINE,
            what="the edit's generation observed",
        )

        def moved() -> dict[str, float] | None:
            now = _counts(agent.scrape())
            return now if all(now[k] > before[k] for k in now) else None

        # The component's new status re-queues the graph within its coalescing window.
        after = eventually(
            moved,
            deadline=DEADLINE,
            what="every stage histogram to count the edit",
        )
        assert all(after[k] > before[k] for k in after), (before, after)
