"""The soak (issue 30): graphs under churn for a while, the agent's gauges sampled, then every
graph's objects checked against its rendering (no tests here). ``bench/soak.py`` runs it for
30 minutes on the test control plane; ``tests/chaos/test_soak.py`` for 3 on the simulated one.

Churn, one operation at a time at ``rate`` per second, each on a graph picked at random
(seeded): an **edit** (an env value of a component's container), a **scale** (a component's
replicas), a **delete** (re-created once the server has deleted it and its components, so the
new graph does not meet its predecessor's objects), a **foreign label** (another field
manager's label on one of the graph's Deployments or Services, which stays theirs).

Every ``every`` seconds the agent's ``/metrics`` is scraped for the series of
:data:`SERIES` (docs/runtime.md §2a). After the churn, every deleted graph is back, the agent
has observed every graph's generation and its queues are empty; then the **missed changes**
are counted against ``syncagent render`` of the live graphs (offline): every rendered object
missing, every field the rendering sets that the live object holds with another value (what
others added beside it is not compared; owner references are left to the orphan check), and
every object of the agent's that no graph renders or whose owner is gone. (``syncagent plan``
would say the same with a server dry run per object: over 5 minutes for 50 graphs on a loaded
2-core machine.)
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.chaos.support.inventory import Inventory, rendered, take
from tests.support.agent import Agent, Metrics
from tests.support.graphs import component, graph
from tests.support.kube import DCD, DGD, ApiFailure, Kube
from tests.support.polling import eventually

SERIES: dict[str, Callable[[Metrics], float]] = {
    "rss_mb": lambda m: m.sum("syncagent_process_resident_memory_bytes") / 2**20,
    "fds": lambda m: m.sum("syncagent_process_open_fds"),
    "tasks": lambda m: m.sum("syncagent_asyncio_tasks"),
    "cached_objects": lambda m: m.sum("syncagent_cache_objects"),
    "convergence_records": lambda m: m.sum("syncagent_memo_entries", memo="convergence"),
    "events_remembered": lambda m: m.sum("syncagent_memo_entries", memo="events"),
    "fights_tracked": lambda m: m.sum("syncagent_memo_entries", memo="fights"),
    "latency_clocks": lambda m: m.sum("syncagent_memo_entries", memo="latency"),
    "queue_depth": lambda m: m.sum("syncagent_workqueue_depth"),
}
COMPONENTS = ("frontend", "decode")
FOREIGN = "soak-foreign"


def soak_graph(ns: str, name: str) -> dict[str, Any]:
    return graph(ns, name, [component(c, c) for c in COMPONENTS])


@dataclass(frozen=True, slots=True)
class Sample:
    seconds: float  # since the churn started
    values: dict[str, float]


def slope(samples: list[Sample], name: str, *, after: float) -> float:
    """Least-squares growth of ``name`` per 10 minutes over the samples from ``after`` s on."""
    points = [(s.seconds, s.values[name]) for s in samples if s.seconds >= after]
    if len(points) < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / len(points)
    mean_v = sum(v for _, v in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return 0.0
    return 600.0 * sum((t - mean_t) * (v - mean_v) for t, v in points) / spread


class Churn:
    """The churn operations on the graphs ``names`` of ``ns`` (see the module doc)."""

    def __init__(self, kube: Kube, ns: str, names: list[str], *, seed: int) -> None:
        self.kube, self.ns, self.names = kube, ns, list(names)
        self.rng = random.Random(seed)
        self.done: Counter[str] = Counter()
        self.deleted: set[str] = set()
        self.tick = 0

    def step(self) -> None:
        self.tick += 1
        self._recreate()
        live = [n for n in self.names if n not in self.deleted]
        name = self.rng.choice(live)
        op = self.rng.choice(("edit", "scale", "delete", "label"))
        if op == "delete" and len(self.deleted) >= max(1, len(self.names) // 20):
            op = "edit"  # at most 5 % of the graphs away at once
        try:
            getattr(self, f"_{op}")(name)
            self.done[op] += 1
        except ApiFailure as err:
            if err.code not in (404, 409):
                raise
            self.done[f"{op} (raced)"] += 1

    def finish(self, *, deadline: float) -> None:
        """Every deleted graph back."""
        eventually(
            lambda: self._recreate() or not self.deleted,
            deadline=deadline,
            what=f"deleted graphs re-created ({sorted(self.deleted)})",
            interval=1.0,
        )

    def _edit(self, name: str) -> None:
        target = self.rng.choice(COMPONENTS)

        def edit(g: dict[str, Any]) -> None:
            comp = next(c for c in g["spec"]["components"] if c["name"] == target)
            main = comp["podTemplate"]["spec"]["containers"][0]
            main["env"] = [{"name": "SOAK_TICK", "value": str(self.tick)}]

        self.kube.edit_graph(self.ns, name, edit)

    def _scale(self, name: str) -> None:
        replicas = self.rng.randint(1, 3)

        def scale(g: dict[str, Any]) -> None:
            next(c for c in g["spec"]["components"] if c["name"] == "decode")["replicas"] = replicas

        self.kube.edit_graph(self.ns, name, scale)

    def _delete(self, name: str) -> None:
        self.kube.delete(DGD, self.ns, name)
        self.deleted.add(name)

    def _label(self, name: str) -> None:
        kind = self.rng.choice(("Deployment", "Service"))
        target = f"{name}-{self.rng.choice(COMPONENTS)}"
        labels = {"soak.example.com/tick": str(self.tick)}
        self.kube.merge(kind, self.ns, target, {"metadata": {"labels": labels}}, manager=FOREIGN)

    def _recreate(self) -> None:
        for name in sorted(self.deleted):
            gone = self.kube.get(DGD, self.ns, name) is None and all(
                self.kube.get(DCD, self.ns, f"{name}-{c}") is None for c in COMPONENTS
            )
            if gone:
                self.kube.create(soak_graph(self.ns, name))
                self.deleted.discard(name)


def drift(want: Any, have: Any, path: str = "") -> list[str]:
    """The paths where ``have`` (a live object) differs from ``want`` (its rendering): each
    field ``want`` sets must hold the same value; fields only ``have`` holds are not compared."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return [path or "."]
        return [p for k, v in want.items() for p in drift(v, have.get(k), f"{path}.{k}")]
    if isinstance(want, list):
        if not isinstance(have, list) or len(have) != len(want):
            return [path]
        return [
            p
            for i, (w, h) in enumerate(zip(want, have, strict=True))
            for p in drift(w, h, f"{path}[{i}]")
        ]
    return [] if want == have else [path]


def missed_changes(kube: Kube, ns: str) -> tuple[list[str], Inventory]:
    """What the agent left unlike the rendering of the live graphs (see the module doc)."""
    inventory = take(kube, ns)
    out: list[str] = []
    for obj in rendered(kube.list(DGD, ns)):
        key = (obj["kind"], obj["metadata"]["name"])
        live = inventory.live.get(key)
        if live is None:
            out.append(f"lost {key[0]}/{key[1]}")
            continue
        # A listed item carries no apiVersion and kind; they are the key anyway.
        want = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        want["metadata"] = {k: v for k, v in obj["metadata"].items() if k != "ownerReferences"}
        paths = drift(want, live)
        if paths:
            out.append(f"{key[0]}/{key[1]}: {', '.join(paths)}")
    out += [f"extra {k}/{n}" for k, n in inventory.extra]
    out += [f"orphaned {k}/{n}" for k, n in inventory.orphaned]
    return out, inventory


@dataclass
class SoakRun:
    samples: list[Sample] = field(default_factory=list)
    operations: Counter[str] = field(default_factory=Counter)
    missed: list[str] = field(default_factory=list)
    inventory: Inventory | None = None

    def peak(self, name: str) -> float:
        return max((s.values[name] for s in self.samples), default=0.0)


def settled(kube: Kube, ns: str, agent: Agent) -> bool:
    """The agent observed every graph's generation and has nothing queued."""
    graphs = kube.list(DGD, ns)
    observed = all(
        (g.get("status") or {}).get("observedGeneration") == g["metadata"]["generation"]
        for g in graphs
    )
    return observed and agent.scrape().sum("syncagent_workqueue_depth") == 0


def sample(agent: Agent, started: float) -> Sample:
    metrics = agent.scrape()
    return Sample(time.monotonic() - started, {k: f(metrics) for k, f in SERIES.items()})


def run_soak(
    kube: Kube,
    agent: Agent,
    ns: str,
    names: list[str],
    *,
    seconds: float,
    rate: float,
    every: float = 10.0,
    seed: int = 30,
    on_sample: Callable[[Sample], None] | None = None,
    settle_deadline: float = 600.0,
) -> SoakRun:
    """Churn the converged graphs ``names`` for ``seconds``, sampling every ``every`` s; then
    let the agent settle and count what it missed."""
    run = SoakRun()
    churn = Churn(kube, ns, names, seed=seed)
    started = time.monotonic()
    next_sample = started
    while (now := time.monotonic()) < started + seconds:
        if now >= next_sample:
            run.samples.append(sample(agent, started))
            if on_sample is not None:
                on_sample(run.samples[-1])
            next_sample += every
        churn.step()
        # Pace the load: ``rate`` operations a second, whatever each one cost.
        time.sleep(max(0.0, started + churn.tick / rate - time.monotonic()))
    run.samples.append(sample(agent, started))
    churn.finish(deadline=settle_deadline)
    run.operations = churn.done
    # A change still in flight (a key re-queued after a short delay is not in the queue yet)
    # is not a missed one: look again, up to three times; a missed change stays.
    for _ in range(3):
        eventually(
            lambda: settled(kube, ns, agent), deadline=settle_deadline, what="the agent idle"
        )
        run.missed, run.inventory = missed_changes(kube, ns)
        if not run.missed:
            break
    return run
