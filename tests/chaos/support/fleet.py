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
from tests.support.kube import DGD, Kube, condition
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
