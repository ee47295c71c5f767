"""Many graphs converging behind the fault proxy (R2) (no tests here)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from tests.chaos.support.inventory import Inventory, take
from tests.chaos.support.migrations import fresh_namespace, owned_agent
from tests.support.agent import Metrics
from tests.support.apiproxy import ApiProxy, Faults
from tests.support.graphs import component, graph
from tests.support.kube import DCD, DGD, Kube, condition
from tests.support.polling import eventually

CONVERGE_DEADLINE = 1200.0


def fleet_graph(ns: str, i: int) -> dict[str, Any]:
    return graph(
        ns, f"g{i:03d}", [component("frontend", "frontend"), component("decode", "decode")]
    )


@dataclass(frozen=True)
class Convergence:
    """Whether every graph is Ready at its generation; its text names each one that is not,
    with its conditions (what a timed-out wait prints)."""

    total: int
    laggards: tuple[str, ...]

    def __bool__(self) -> bool:
        return self.total > 0 and not self.laggards

    def __repr__(self) -> str:
        return f"{len(self.laggards)} of {self.total} graphs not converged: {list(self.laggards)}"


def _lagging(g: dict[str, Any]) -> str | None:
    status = g.get("status") or {}
    generation = g["metadata"].get("generation")
    ready = condition(g, "Ready")
    if ready.get("status") == "True" and status.get("observedGeneration") == generation:
        return None
    conditions = [
        f"{c.get('type')}={c.get('status')} {c.get('reason', '')}: {c.get('message', '')}"
        for c in status.get("conditions") or ()
    ]
    return (
        f"{g['metadata']['name']} generation {generation} observed "
        f"{status.get('observedGeneration')}, conditions {conditions}"
    )


def converged(graphs: list[dict[str, Any]]) -> Convergence:
    return Convergence(len(graphs), tuple(filter(None, map(_lagging, graphs))))


GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"


def _workload(deployment: dict[str, Any] | None) -> str:
    """A Deployment as its controller last reported it (what the agent's readiness reads)."""
    if deployment is None:
        return "no Deployment"
    status = deployment.get("status") or {}
    return (
        f"Deployment {status.get('readyReplicas', 0)}/{deployment['spec'].get('replicas')} "
        f"ready, observed {status.get('observedGeneration')} of generation "
        f"{deployment['metadata'].get('generation')}, "
        f"Available={condition(deployment, 'Available').get('status')}"
    )


def _component(dcd: dict[str, Any], deployments: dict[str, dict[str, Any]]) -> str:
    available = condition(dcd, "Available")
    name = dcd["metadata"]["name"]
    return (
        f"{name}: Available={available.get('status')} ({available.get('message', '')}), "
        f"observed {(dcd.get('status') or {}).get('observedGeneration')} of generation "
        f"{dcd['metadata'].get('generation')}; {_workload(deployments.get(name))}"
    )


def converged_in(kube: Kube, ns: str) -> Convergence:
    """:func:`converged` for the graphs of ``ns``; each graph not converged also names its
    components' ``Available`` and their Deployments as the server has them, so a timeout says
    whether the agent or the cluster held it (a component the agent reports unavailable over a
    ready Deployment is the agent's)."""
    graphs = kube.list(DGD, ns)
    lagging = [(g["metadata"]["name"], text) for g in graphs if (text := _lagging(g))]
    if not lagging:
        return Convergence(len(graphs), ())
    deployments = {d["metadata"]["name"]: d for d in kube.list("Deployment", ns)}
    components: dict[str, list[str]] = {}
    for dcd in kube.list(DCD, ns):
        graph_name = (dcd["metadata"].get("labels") or {}).get(GRAPH_LABEL, "")
        components.setdefault(graph_name, []).append(_component(dcd, deployments))
    laggards = tuple(f"{text}; components {components.get(name, [])}" for name, text in lagging)
    return Convergence(len(graphs), laggards)


@dataclass
class FleetRun:
    graphs: int
    faults: Faults | None
    seconds: float = 0.0
    requests: int = 0
    injected: dict[str, int] = field(default_factory=dict)
    retries: dict[str, float] = field(default_factory=dict)
    requeues: float = 0.0
    inventory: Inventory | None = None

    def describe(self) -> str:
        kind = f"{self.faults.rate:.0%} faults" if self.faults and self.faults.rate else "clean"
        injected = ", ".join(f"{k} {v}" for k, v in sorted(self.injected.items())) or "none"
        retries = ", ".join(f"{k} {v:.0f}" for k, v in sorted(self.retries.items())) or "none"
        return (
            f"{kind}: {self.graphs} graphs Ready in {self.seconds:.1f}s; {self.requests} requests "
            f"through the proxy, injected: {injected}; agent retries by reason: {retries}; "
            f"reconciles requeued after an error: {self.requeues:.0f}; "
            f"{self.inventory.summary() if self.inventory else ''}"
        )


def _retries(metrics: Metrics) -> dict[str, float]:
    out: dict[str, float] = {}
    for (name, labels), value in metrics.samples.items():
        if name == "syncagent_api_retries_total":
            reason = dict(labels)["reason"]
            out[reason] = out.get(reason, 0.0) + value
    return out


def converge_fleet(plane: Any, kube: Kube, *, graphs: int, faults: Faults | None) -> FleetRun:
    run = FleetRun(graphs, faults)
    with fresh_namespace(kube) as ns:
        for i in range(graphs):
            kube.create(fleet_graph(ns, i))
        with ApiProxy(plane, faults=faults) as proxy, owned_agent(proxy.kubeconfig, ns) as agent:
            started = time.monotonic()
            eventually(
                lambda: converged(kube.list(DGD, ns)),
                deadline=CONVERGE_DEADLINE,
                what=f"{graphs} graphs Ready",
            )
            run.seconds = time.monotonic() - started
            scrape = agent.scrape()
            run.retries = _retries(scrape)
            run.requeues = scrape.sum("syncagent_workqueue_retries_total")
            run.requests = proxy.stats.requests
            run.injected = dict(proxy.stats.faults)
        run.inventory = take(kube, ns)
    return run
