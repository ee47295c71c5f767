"""First convergence against the raw-apply floor, counted by the API server itself (issue 16).

    python3 bench/floor.py [--graphs 200] [--concurrency 8] [--skip-agent-checks]

Starts its own control plane (the test one), then, for the same N graphs of 4 components each:
1. the floor: a bare loop applies every rendered object once (forced SSA, real owner UIDs,
   owners first) and writes three statuses per graph and per DCD, ``--concurrency`` at a time,
   in a fresh namespace;
2. the agent: ``syncagent run`` converges the same graphs from scratch in another fresh
   namespace until every graph is Ready (workload readiness is simulated: there is no kubelet).
Both are counted from the API server's own ``apiserver_request_total`` (mutating verbs, dry runs
included; the simulated kubelet's Deployment status writes left out) and timed. Then, unless
``--skip-agent-checks``: a converged resync, an agent restart and one changed component, and
the agent's RSS and graph change -> status write latency. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
from lightkube import Client, KubeConfig

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the test support package: agent subprocess, raw API calls

import floor_support as fs  # noqa: E402
from watchers import Kubelet, ReadyGraphs  # noqa: E402

from syncagent.devcluster import ControlPlane  # noqa: E402
from tests.support.agent import Agent, Metrics  # noqa: E402
from tests.support.kube import DGD, Kube  # noqa: E402
from tests.support.polling import eventually  # noqa: E402

READY = "all_resources_are_ready"
KINDS = (
    "DynamoComponentDeployment",
    "Deployment",
    "Service",
    "ServiceAccount",
    "Role",
    "RoleBinding",
)


def create_graphs(kube: Kube, namespace: str, count: int) -> list[dict]:
    fs.create_namespace(kube, namespace)
    return [kube.create(g) for g in fs.graphs(namespace, count)]


POOL = ThreadPoolExecutor(max_workers=8)


def poll_interval(count: int) -> float:
    """How often the bench looks for Ready graphs (and plays the kubelet): every second per 200
    graphs. Each look lists every Deployment and graph, which at 1,000 graphs is 5,000 objects
    the API server serializes; polling faster would take its CPU from the agent's requests (the
    floor phase runs no poller). Wall times are exact to this interval."""
    return max(1.0, count / 200)


def all_ready(kube: Kube, namespace: str, count: int) -> bool:
    fs.simulate_ready(kube, namespace, POOL)
    ready = 0
    for g in kube.list(DGD, namespace):
        conditions = (g.get("status") or {}).get("conditions") or []
        ready += any(c.get("type") == "Ready" and c.get("reason") == READY for c in conditions)
    return ready == count


def floor(kube: Kube, count: int, concurrency: int, plane: ControlPlane) -> tuple:
    created = create_graphs(kube, "floor", count)
    before, cpu = fs.server_requests(kube), fs.cpu_seconds(*plane.pids)
    wrote, took = fs.timed(fs.bare_loop, kube, created, concurrency=concurrency)
    counts = fs.mutating(before, fs.server_requests(kube))
    return sum(counts.values()), took, wrote, fs.cpu_seconds(*plane.pids) - cpu


def converge(kube: Kube, plane: ControlPlane, count: int, args: argparse.Namespace) -> Agent:
    create_graphs(kube, "agent", count)
    flags = ("--concurrency", str(args.concurrency), "--resync-period", f"{args.resync}s")
    before, cpu = fs.server_requests(kube), fs.cpu_seconds(*plane.pids)
    # Watches, not polls: a list of every object each second loaded the API server in this
    # phase only, and rounded the wall time to it. The kubelet stays for the later phases.
    Kubelet(kube, "agent", POOL)
    ready = ReadyGraphs(kube, "agent", count)
    start = time.monotonic()
    agent = Agent(plane.kubeconfig, *flags, namespace="agent")
    took = ready.wait(deadline=3600) - start
    ready.stop()
    agent.cpu = (fs.cpu_seconds(*plane.pids) - cpu, fs.cpu_seconds(agent.proc.pid))  # type: ignore[attr-defined]
    after = fs.server_requests(kube)
    at_ready = fs.mutating(before, after)["events"]
    counts = settled(kube, before)
    agent.figures = (sum(counts.values()), took, counts, fs.dry_runs(before, after), at_ready)  # type: ignore[attr-defined]
    return agent


def settled(kube: Kube, before: Counter) -> Counter:
    """The agent's mutating requests once its queued Events are written: Events wait while
    reconciles wait (docs/lifecycle.md §4), so some are sent after the last graph is Ready.
    Settled: no new request in 2 s."""
    last = fs.mutating(before, fs.server_requests(kube))
    for _ in range(300):
        time.sleep(2)
        now = fs.mutating(before, fs.server_requests(kube))
        if now == last:
            break
        last = now
    return last


def report_convergence(count: int, floor_fig: tuple, agent: Agent) -> None:
    f_requests, f_took, wrote, f_cpu = floor_fig
    a_requests, a_took, by_resource, dry, at_ready = agent.figures  # type: ignore[attr-defined]
    events = by_resource.get("events", 0)
    core = a_requests - events
    print(
        f"graphs: {count} x 4 components; objects {wrote['objects']}, status owners "
        f"{wrote['status owners']}, co-owner items 0"
    )
    print(f"floor: {f_requests} mutating requests in {f_took:.1f}s")
    print(
        f"agent: {core} mutating requests (dry runs {dry}) + {events} events "
        f"({at_ready} of them when Ready), all Ready after {a_took:.1f}s"
    )
    print(
        f"ratio: requests {core / f_requests:.2f}x (with events {a_requests / f_requests:.2f}x)"
        f", wall {a_took / f_took:.2f}x"
    )
    plane_cpu, agent_cpu = agent.cpu  # type: ignore[attr-defined]
    print(
        f"CPU until Ready: control plane {f_cpu:.1f}s floor, {plane_cpu:.1f}s agent phase "
        f"({plane_cpu / f_cpu:.2f}x); the agent {agent_cpu:.1f}s"
    )
    print(
        "agent mutating requests by resource: "
        + ", ".join(f"{k}={v}" for k, v in sorted(by_resource.items()))
    )


def report_agent(agent: Agent) -> None:
    m = agent.scrape()
    verbs: dict[str, float] = {}
    for (name, labels), value in m.samples.items():
        if name == "syncagent_api_requests_total":
            verb = dict(labels).get("verb", "?")
            verbs[verb] = verbs.get(verb, 0) + value
    print(
        "agent requests by verb (its own count, Lease renewals included): "
        + ", ".join(f"{k}={v:.0f}" for k, v in sorted(verbs.items()))
    )
    print(f"agent RSS after convergence: {fs.rss_mb(agent.proc.pid):.0f} MB")
    buckets = fs.histogram(m.samples, "syncagent_graph_change_to_status_seconds")
    p50, p99 = fs.percentile(buckets, 0.5), fs.percentile(buckets, 0.99)
    print(
        f"graph change -> status write: p50 {p50:.2f}s, p99 {p99:.2f}s "
        f"({int(buckets[-1][1]) if buckets else 0} observations)"
    )


def scrape(agent: Agent) -> Metrics | None:
    """The agent's metrics, or None while it is too busy to answer (a loaded machine)."""
    try:
        return agent.scrape()
    except OSError:
        return None


def passed(agent: Agent, count: int) -> bool:
    m = scrape(agent)
    return (
        m is not None
        and m.sum("syncagent_reconcile_total", controller="dgd") >= count
        and m.sum("syncagent_reconcile_total", controller="dcd") >= 4 * count
        and m.sum("syncagent_workqueue_depth") == 0
    )


def agent_requests(m: Metrics) -> tuple[float, float]:
    reconcile = m.requests(
        verbs=("get", "patch", "create", "update", "delete"), exclude=("", "leases", "events")
    )
    return reconcile, m.writes()


def resync(agent: Agent, count: int, period: float) -> None:
    base = agent.scrape()
    done = base.sum("syncagent_reconcile_total", controller="dgd") + 2 * count
    after = eventually(
        lambda: (
            (m := scrape(agent)) is not None
            and m.sum("syncagent_reconcile_total", controller="dgd") >= done
            and m
        ),
        deadline=4 * period + 600,
        what="two full resyncs",
    )
    (r0, w0), (r1, w1) = agent_requests(base), agent_requests(after)
    print(f"converged resyncs (2 x {count} graphs): {r1 - r0:.0f} requests, {w1 - w0:.0f} writes")


def restart(kube: Kube, kubeconfig: Path, count: int, args: argparse.Namespace) -> Agent:
    before = fs.server_requests(kube)
    agent = Agent(
        kubeconfig,
        "--concurrency",
        str(args.concurrency),
        "--resync-period",
        f"{args.resync}s",
        namespace="agent",
    )
    eventually(lambda: passed(agent, count), deadline=3600, what="a full pass after the restart")
    after = fs.server_requests(kube)
    metrics = agent.scrape()
    changed = sum(
        metrics.sum("syncagent_apply_actions_total", result=r) for r in ("created", "configured")
    )
    counts = fs.mutating(before, after)
    objects = sum(len(kube.list(kind, "agent")) for kind in KINDS)
    print(
        f"after a restart: {changed:.0f} changing writes, {sum(counts.values())} mutating "
        f"requests (dry runs {fs.dry_runs(before, after)}) for {objects} objects, "
        f"{metrics.requests():.0f} requests in all incl. lists/watches"
    )
    return agent


def change_one(kube: Kube, agent: Agent, count: int) -> None:
    kinds = KINDS
    versions = {
        (k, o["metadata"]["name"]): o["metadata"]["resourceVersion"]
        for k in kinds
        for o in kube.list(k, "agent")
    }
    hist = "syncagent_graph_change_to_status_seconds"
    before = agent.scrape()
    g = kube.get(DGD, "agent", "g0000")
    g["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["image"] = "changed:1"
    kube.request("PUT", "/apis/nvidia.com/v1beta1/namespaces/agent/dynamographdeployments/g0000", g)
    eventually(
        lambda: (
            all_ready(kube, "agent", len(kube.list(DGD, "agent")))
            and any(
                c["image"] == "changed:1"
                for c in (kube.get("Deployment", "agent", "g0000-decode") or {})
                .get("spec", {})
                .get("template", {})
                .get("spec", {})
                .get("containers", [])
            )
        ),
        deadline=600,
        what="the change to roll out",
        interval=poll_interval(count),
    )
    now = {
        (k, o["metadata"]["name"]): o["metadata"]["resourceVersion"]
        for k in kinds
        for o in kube.list(k, "agent")
    }
    moved = sorted(f"{k}/{n}" for (k, n), rv in now.items() if versions.get((k, n)) != rv)
    print(f"one changed component (g0000 decode image): objects written: {', '.join(moved)}")
    after = eventually(lambda: scrape(agent), deadline=60, what="the agent's metrics")
    took = after.sum(f"{hist}_sum") - before.sum(f"{hist}_sum")
    seen = after.sum(f"{hist}_count") - before.sum(f"{hist}_count")
    print(f"  that change -> its status write: {took:.2f}s ({seen:.0f} observation)")


def split(kube: Kube, kubeconfig: Path, count: int, args: argparse.Namespace) -> None:
    """Two shards with disjoint selectors converge ``count`` graphs in a fresh namespace."""
    fs.create_namespace(kube, "shards")
    for i, g in enumerate(fs.graphs("shards", count)):
        g["metadata"]["labels"] = {"shard": "a" if i % 2 == 0 else "b"}
        kube.create(g)
    shards = {"a": "shard in (a)", "b": "shard notin (a)"}
    agents = {
        name: Agent(kubeconfig, "--shard-name", name, "--shard-selector", selector,
                    "--concurrency", str(args.concurrency), namespace="shards")
        for name, selector in shards.items()
    }  # fmt: skip
    try:
        start = time.monotonic()
        eventually(
            lambda: all_ready(kube, "shards", count),
            deadline=3600,
            what="shards Ready",
            interval=poll_interval(count),
        )
        print(f"two shards: all {count} graphs Ready after {time.monotonic() - start:.1f}s")
        total = 0.0
        for name, agent in agents.items():
            m = agent.scrape()
            cached = m.sum("syncagent_cache_objects", resource="shards/dynamographdeployments")
            created = m.sum(
                "syncagent_apply_actions_total", kind="DynamoComponentDeployment", result="created"
            )
            total += created
            print(
                f"  shard {name}: {cached:.0f} graphs cached, {created:.0f} DCDs created, "
                f"RSS {fs.rss_mb(agent.proc.pid):.0f} MB"
            )
        print(f"  DCDs created by both shards together: {total:.0f} (graphs x 4 = {4 * count})")
    finally:
        for agent in agents.values():
            agent.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--resync", type=float, default=60.0, help="agent resync period (s)")
    parser.add_argument("--skip-agent-checks", action="store_true")
    parser.add_argument("--shards", action="store_true", help="also split the graphs in 2 shards")
    args = parser.parse_args()
    with ControlPlane(extra_crds=sorted((REPO / "crds").glob("*.yaml"))) as plane:
        config = KubeConfig.from_file(str(plane.kubeconfig))
        # A shared machine can keep the API server seconds from answering: wait for it.
        client = Client(config=config, field_manager="bench", timeout=httpx2.Timeout(300.0))
        kube = Kube(client)
        floor_fig = floor(kube, args.graphs, args.concurrency, plane)
        agent = converge(kube, plane, args.graphs, args)
        try:
            report_convergence(args.graphs, floor_fig, agent)
            report_agent(agent)
            if not args.skip_agent_checks:
                resync(agent, args.graphs, args.resync)
        finally:
            agent.stop()
        if not args.skip_agent_checks:
            agent = restart(kube, plane.kubeconfig, args.graphs, args)
            try:
                change_one(kube, agent, args.graphs)
            finally:
                agent.stop()
        if args.shards:
            split(kube, plane.kubeconfig, args.graphs, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
