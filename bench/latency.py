"""Reaction latency on a converged agent: one graph change until its status observes it (issue 31).

    python3 bench/latency.py [--graphs 200] [--edits 50] [--spread 60] [--idle 300]
                             [--resync 600] [--concurrency 8]

Starts its own control plane (the test one: kube-apiserver + etcd + garbage collector), creates N
graphs of 4 components (frontend, decode, prefill, worker), runs ``syncagent run`` until every
graph is Ready (a fake kubelet writes Deployment status: there is no kubelet) and the agent is
idle, then:
1. ``--edits`` JSON patches of one graph each (a new image for its decode component, distinct
   graphs picked with seed 31), spread evenly over ``--spread`` seconds. The bench's own watch
   of the graphs (started before the first edit) timestamps when each edit's new generation
   arrives and when the graph's status first shows ``observedGeneration`` at it: the outside
   figure is the patch's send to that status event;
2. the agent's /metrics before and after the edits: each stage's p50, p99 and the upper bound of
   its largest observation (runtime/stages.py: the watch's delay, queue wait, the coalescing
   window, each reconcile's render, reads, writes and status writes; the agent's own graph
   change -> status write histogram);
3. idle CPU: once the edited graphs are Ready again and the agent is idle, the agent process's
   CPU time (``/proc/PID/stat``) over ``--idle`` seconds, and what it did meanwhile.
Prints figures with the load average beside them; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import orjson
from lightkube import Client, KubeConfig

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the test support package: agent subprocess, raw API calls

import floor_support as fs  # noqa: E402

from syncagent.devcluster import ControlPlane  # noqa: E402
from tests.support import latency_figures as lf  # noqa: E402
from tests.support.agent import Agent, Metrics  # noqa: E402
from tests.support.kube import DGD, Kube  # noqa: E402
from tests.support.polling import eventually  # noqa: E402

NAMESPACE = "latency"
READY = "all_resources_are_ready"
POOL = ThreadPoolExecutor(max_workers=8)
JSON_PATCH = "application/json-patch+json"


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def ready_count(kube: Kube) -> int:
    fs.simulate_ready(kube, NAMESPACE, POOL)
    ready = 0
    for g in kube.list(DGD, NAMESPACE):
        conditions = (g.get("status") or {}).get("conditions") or []
        ready += any(c.get("type") == "Ready" and c.get("reason") == READY for c in conditions)
    return ready


def scrape(agent: Agent) -> Metrics | None:
    """The agent's metrics, or None while it is too busy to answer (a loaded machine)."""
    try:
        return agent.scrape()
    except OSError:
        return None


def idle(agent: Agent, *, quiet: float = 5.0) -> Metrics:
    """Wait until the agent wrote nothing (Leases aside, dry runs and Events included) for
    ``quiet`` seconds and no key waits; the last scrape. (A resync keeps reconciling
    converged objects, spread over its period: reconciles never stop.)"""
    state: dict[str, float] = {}

    def still() -> Metrics | None:
        m = scrape(agent)
        if m is None:
            return None
        writes = m.requests(verbs=("create", "patch", "update", "delete"), exclude=("leases",))
        done = writes + m.sum("syncagent_workqueue_depth")
        now = time.monotonic()
        if state.get("done") != done:
            state.update(done=done, since=now)
            return None
        return m if now - state["since"] >= quiet else None

    return eventually(still, deadline=1800, what="the agent idle", interval=1.0)


class GraphWatch:
    """The bench's own watch of the graphs: when each (graph, generation) first arrived, and
    when the graph's status first showed observedGeneration at or past it (monotonic time)."""

    def __init__(self, kube: Kube, resource_version: str) -> None:
        self.http = kube.separate().http
        self.seen: dict[tuple[str, int], float] = {}
        self.statuses: list[tuple[str, int, float]] = []  # (graph, observedGeneration, when)
        self._rv = resource_version
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        params = {"watch": "true", "resourceVersion": self._rv, "timeoutSeconds": "3600"}
        path = f"/apis/nvidia.com/v1beta1/namespaces/{NAMESPACE}/dynamographdeployments"
        try:
            with self.http.stream("GET", path, params=params, timeout=None) as response:
                for line in response.iter_lines():
                    if line.strip():
                        self._record(orjson.loads(line)["object"], time.monotonic())
        except httpx2.HTTPError:
            return  # the control plane stopped at the end of the run

    def _record(self, obj: dict, now: float) -> None:
        name = obj["metadata"]["name"]
        self.seen.setdefault((name, int(obj["metadata"].get("generation") or 0)), now)
        observed = int((obj.get("status") or {}).get("observedGeneration") or 0)
        self.statuses.append((name, observed, now))

    def observed(self, name: str, generation: int) -> float | None:
        return next((t for n, o, t in list(self.statuses) if n == name and o >= generation), None)


def edit(kube: Kube, name: str, n: int) -> tuple[float, float, int]:
    """A new decode image for graph ``name``: (sent, answered, its new generation)."""
    patch = [
        {
            "op": "replace",
            "path": "/spec/components/1/podTemplate/spec/containers/0/image",
            "value": f"bench/decode:edit-{n}",
        }
    ]
    sent = time.monotonic()
    out = kube.request("PATCH", kube.path(DGD, NAMESPACE, name), patch, content_type=JSON_PATCH)
    return sent, time.monotonic(), int(out["metadata"]["generation"])


def run_edits(kube: Kube, names: list[str], args: argparse.Namespace) -> list[tuple]:
    rv = kube.request("GET", kube.path(DGD, NAMESPACE), limit="1")["metadata"]["resourceVersion"]
    watch = GraphWatch(kube, rv)
    picked = random.Random(31).sample(names, min(args.edits, len(names)))
    start = time.monotonic()
    done = []
    for n, name in enumerate(picked):
        due = start + n * args.spread / max(1, len(picked) - 1)
        time.sleep(max(0.0, due - time.monotonic()))
        done.append((name, *edit(kube, name, n)))
    eventually(
        lambda: all(watch.observed(name, gen) for name, _, _, gen in done),
        deadline=600,
        what="every edit's status",
    )
    return [
        (name, sent, answered, watch.seen.get((name, gen)), watch.observed(name, gen))
        for name, sent, answered, gen in done
    ]


def report_edits(results: list[tuple]) -> None:
    outside = [observed - sent for _, sent, _, _, observed in results]
    delivered = [seen - answered for _, _, answered, seen, _ in results if seen is not None]
    worst = max(range(len(results)), key=lambda i: outside[i])
    print(
        f"edit -> status observed (outside, {len(outside)} edits): "
        f"p50 {lf.nearest_rank(outside, 0.5):.3f}s, p99 {lf.nearest_rank(outside, 0.99):.3f}s, "
        f"worst {outside[worst]:.3f}s ({results[worst][0]}); {load()}"
    )
    print(
        "  the bench's own watch, patch answered -> its event: "
        f"p50 {lf.nearest_rank(delivered, 0.5):.3f}s, max {max(delivered, default=0):.3f}s"
    )
    name, sent, answered, seen, observed = results[worst]
    seen = answered if seen is None else seen
    print(
        f"  worst ({name}): patch answered after {answered - sent:.3f}s, its event "
        f"{seen - answered:.3f}s later, its status observed {observed - seen:.3f}s after that"
    )


STAGES = (
    ("watch delay (graph write -> agent; write times in whole seconds: up to 1 s high)", "syncagent_graph_watch_delay_seconds", {}),
    ("dgd queue wait", "syncagent_workqueue_queue_duration_seconds", {"queue": "dgd"}),
    ("dgd render", "syncagent_reconcile_stage_seconds", {"controller": "dgd", "stage": "render"}),
    ("dgd read", "syncagent_reconcile_stage_seconds", {"controller": "dgd", "stage": "read"}),
    ("dgd write (each)", "syncagent_reconcile_stage_seconds", {"controller": "dgd", "stage": "write"}),
    ("dgd status write", "syncagent_reconcile_stage_seconds", {"controller": "dgd", "stage": "status_write"}),
    ("agent: graph change -> status write", "syncagent_graph_change_to_status_seconds", {}),
    ("dcd queue wait", "syncagent_workqueue_queue_duration_seconds", {"queue": "dcd"}),
    ("dcd render", "syncagent_reconcile_stage_seconds", {"controller": "dcd", "stage": "render"}),
    ("dcd read", "syncagent_reconcile_stage_seconds", {"controller": "dcd", "stage": "read"}),
    ("dcd write (each)", "syncagent_reconcile_stage_seconds", {"controller": "dcd", "stage": "write"}),
    ("dcd status write", "syncagent_reconcile_stage_seconds", {"controller": "dcd", "stage": "status_write"}),
    ("dgd coalescing window (a child changed)", "syncagent_workqueue_coalesce_seconds", {"queue": "dgd"}),
)  # fmt: skip


def report_stages(before: Metrics, after: Metrics) -> None:
    print("stages during the edits (agent's /metrics, after - before):")
    for title, name, match in STAGES:
        print("  " + lf.stage(before.samples, after.samples, title, name, **match).line())
    reconciles = {
        c: after.sum("syncagent_reconcile_total", controller=c)
        - before.sum("syncagent_reconcile_total", controller=c)
        for c in ("dgd", "dcd")
    }
    print(f"  reconciles: dgd {reconciles['dgd']:.0f}, dcd {reconciles['dcd']:.0f}")
    print(f"  requests: {requests(before, after)}")


def requests(before: Metrics, after: Metrics) -> str:
    """The agent's requests between two scrapes by verb and resource (Leases left out)."""
    counts: dict[str, float] = {}
    for (name, labels), value in after.samples.items():
        d = dict(labels)
        if name != "syncagent_api_requests_total" or d.get("resource") == "leases":
            continue
        dry = " (dry run)" if d.get("dry_run") == "true" else ""
        key = f"{d.get('verb')} {d.get('resource')}{dry}"
        counts[key] = counts.get(key, 0.0) + value - before.samples.get((name, labels), 0.0)
    return ", ".join(f"{k}={v:.0f}" for k, v in sorted(counts.items()) if v) or "none"


def cpu(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return lf.cpu_seconds(stat, ticks=os.sysconf("SC_CLK_TCK"))


def measure_idle(agent: Agent, seconds: float) -> None:
    before, cpu0, t0 = agent.scrape(), cpu(agent.proc.pid), time.monotonic()
    time.sleep(seconds)
    cpu1, t1, after = cpu(agent.proc.pid), time.monotonic(), agent.scrape()
    share = (cpu1 - cpu0) / (t1 - t0)
    reconciles = after.sum("syncagent_reconcile_total") - before.sum("syncagent_reconcile_total")
    requests = after.requests() - before.requests()
    print(
        f"idle CPU: {100 * share:.2f}% of a core over {t1 - t0:.0f}s ({cpu1 - cpu0:.2f}s CPU; "
        f"{reconciles:.0f} reconciles, {requests:.0f} requests incl. Lease renewals); {load()}"
    )


def converge(kube: Kube, agent: Agent, count: int) -> None:
    start = time.monotonic()
    eventually(
        lambda: ready_count(kube) == count,
        deadline=3600,
        what="all graphs Ready",
        interval=max(1.0, count / 200),
    )
    idle(agent)
    took = time.monotonic() - start
    print(f"{count} graphs x 4 components Ready, agent idle after {took:.0f}s; {load()}")


def measure(kube: Kube, agent: Agent, names: list[str], args: argparse.Namespace) -> None:
    converge(kube, agent, len(names))
    before = idle(agent)
    results = run_edits(kube, names, args)
    report_edits(results)
    after = idle(agent)
    report_stages(before, after)
    eventually(lambda: ready_count(kube) == len(names), deadline=600, what="edited graphs Ready")
    idle(agent)
    measure_idle(agent, args.idle)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--spread", type=float, default=60.0, help="seconds the edits span")
    parser.add_argument("--idle", type=float, default=300.0, help="seconds of idle CPU")
    parser.add_argument("--resync", default="600s", help="the agent's --resync-period")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with ControlPlane(extra_crds=sorted((REPO / "crds").glob("*.yaml"))) as plane:
        config = KubeConfig.from_file(str(plane.kubeconfig))
        kube = Kube(Client(config=config, field_manager="bench", timeout=httpx2.Timeout(300.0)))
        fs.create_namespace(kube, NAMESPACE)
        names = [kube.create(g)["metadata"]["name"] for g in fs.graphs(NAMESPACE, args.graphs)]
        flags = ("--concurrency", str(args.concurrency), "--resync-period", args.resync)
        agent = Agent(plane.kubeconfig, *flags, namespace=NAMESPACE, start_deadline=120.0)
        try:
            measure(kube, agent, names, args)
        finally:
            agent.stop()
            agent.discard_log()
    return 0


if __name__ == "__main__":
    sys.exit(main())
