"""A component must not decide on a cached copy of itself older than its own last status write.

Status changes wake nothing (docs/caches.md, "What a watch event wakes"), so a status write the
agent skipped because its cache still showed the status it meant to write is never revisited:
the cache then catches up with the agent's own *earlier* write, and the component keeps it
until another change comes (or the 10-minute resync). This is the order chaos R7's watch cuts
make likely (issue 23): the component's watch lags while its Deployment's does not.

The order is injected here, on the real API server, with the HTTP proxy of
``tests/support/apiproxy.py`` holding the agent's DynamoComponentDeployment watch:

1. the graph is Ready (the component's ``Available=True`` is in the agent's cache);
2. the component watch is held; the Deployment goes unready, so the agent writes
   ``Available=False`` (which its held cache never sees);
3. the Deployment is ready again: the agent's reconcile computes ``Available=True``, which its
   stale cache already shows;
4. the watch is released: the cache now shows the agent's own ``Available=False``.

The component and its graph must come back to Available/Ready with no further change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.agent import Agent, reconciled, running_agent
from tests.support.apiproxy import ApiProxy
from tests.support.fake_workloads import become_ready, simulate_ready
from tests.support.graphs import component, graph
from tests.support.kube import DCD, Kube, condition, ready_reason
from tests.support.polling import eventually

DEADLINE = 60.0
COMPONENTS = "dynamocomponentdeployments"


def _available(kube: Kube, ns: str, name: str) -> str | None:
    return condition(kube.get(DCD, ns, name), "Available").get("status")


def _unready(kube: Kube, ns: str, name: str) -> None:
    """The Deployment's pods stopped being ready (what its controller would write)."""
    status: dict[str, Any] = {
        "replicas": 0,
        "updatedReplicas": 0,
        "readyReplicas": 0,
        "availableReplicas": 0,
        "conditions": [
            {
                "type": "Available",
                "status": "False",
                "reason": "MinimumReplicasUnavailable",
                "message": "simulated",
                "lastUpdateTime": "2026-01-01T00:00:01Z",
                "lastTransitionTime": "2026-01-01T00:00:01Z",
            }
        ],
    }
    kube.merge("Deployment", ns, name, {"status": status}, sub="status", manager="test-kubelet")


@dataclass(frozen=True)
class _State:
    """The component's ``Available`` and its graph's ``Ready`` reason (what a timeout prints)."""

    available: str | None
    ready: str

    def __bool__(self) -> bool:
        return self.available == "True" and self.ready == "all_resources_are_ready"


def _reconciles(agent: Agent, key: str, since: int) -> int:
    """Reconciles of component ``key`` the agent logged after character ``since`` of its log."""
    lines = reconciled(agent.logs()[since:])
    return sum(1 for e in lines if e["controller"] == "dcd" and e["key"] == key)


def _reconciled_after(agent: Agent, key: str, since: int, what: str) -> int:
    """Wait for a reconcile of ``key`` logged after ``since``; the log's length then."""
    eventually(lambda: _reconciles(agent, key, since) >= 1, deadline=DEADLINE, what=what)
    return len(agent.logs())


def test_a_component_whose_cache_lags_its_own_status_write_is_not_left_unavailable(
    control_plane, kube, namespace
):
    name, dcd = "g", "g-frontend"
    key = f"{namespace}/{dcd}"
    kube.create(graph(namespace, name, [component("frontend", "frontend")]))
    with (
        ApiProxy(control_plane) as proxy,
        running_agent(proxy.kubeconfig, "--log-level", "debug", namespace=namespace) as agent,
    ):
        become_ready(kube, namespace, name)
        proxy.hold_watches(COMPONENTS)
        # The agent's component watch is cut and its next one waits: its cache is frozen.
        eventually(
            lambda: proxy.held_watches(COMPONENTS) >= 1,
            deadline=DEADLINE,
            what="the agent's component watch held",
        )
        mark = len(agent.logs())
        _unready(kube, namespace, dcd)
        eventually(
            lambda: _available(kube, namespace, dcd) == "False",
            deadline=DEADLINE,
            what="the agent's Available=False write",
        )
        mark = _reconciled_after(agent, key, mark, "the reconcile that wrote Available=False")
        simulate_ready(kube, namespace)
        _reconciled_after(agent, key, mark, "a reconcile of the Deployment ready again")
        proxy.release_watches(COMPONENTS)

        eventually(
            lambda: _State(_available(kube, namespace, dcd), ready_reason(kube, namespace, name)),
            deadline=DEADLINE,
            what="the component Available and its graph Ready again, with no further change",
        )
