"""The agent's memory with N graphs watched and converged (issue 16), and what holds it.

    python3 bench/memory.py [--graphs 200] [--trace] [--concurrency 8]

Starts its own control plane, creates N graphs of 4 components in a fresh namespace, runs
``syncagent run`` on it until every graph is Ready (workload readiness simulated, as in
``floor.py``), printing progress and RSS as it goes, then the agent's RSS. With ``--trace`` the agent runs under tracemalloc
(``traced_agent.py``; slower, and the tracing itself costs memory, so its RSS is not the figure)
and the largest live allocations are printed. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from lightkube import Client, KubeConfig

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import floor  # noqa: E402
import floor_support as fs  # noqa: E402

from syncagent.devcluster import ControlPlane  # noqa: E402
from tests.support.agent import Agent  # noqa: E402
from tests.support.kube import DGD, Kube  # noqa: E402
from tests.support.polling import eventually  # noqa: E402


def ready_count(kube: Kube, namespace: str) -> int:
    floor.fs.simulate_ready(kube, namespace, floor.POOL)
    return sum(
        any(
            c.get("type") == "Ready" and c.get("reason") == floor.READY
            for c in (g.get("status") or {}).get("conditions") or []
        )
        for g in kube.list(DGD, namespace)
    )


def converge(kube: Kube, agent: Agent, args: argparse.Namespace) -> None:
    """Poll until every graph is Ready or ``--deadline`` passes, printing progress and RSS."""
    start = time.monotonic()
    ready = 0
    while ready < args.graphs and time.monotonic() - start < args.deadline:
        time.sleep(args.every)
        ready = ready_count(kube, "agent")
        metrics = floor.scrape(agent)
        cached = metrics.sum("syncagent_cache_objects") if metrics is not None else float("nan")
        print(
            f"  {time.monotonic() - start:7.1f}s: {ready}/{args.graphs} graphs Ready, "
            f"{cached:.0f} objects cached, agent RSS {fs.rss_mb(agent.proc.pid):.0f} MB",
            flush=True,
        )
    took = time.monotonic() - start
    print(f"graphs: {args.graphs} x 4 components, {ready} Ready after {took:.1f}s")
    print(f"agent RSS after convergence: {fs.rss_mb(agent.proc.pid):.0f} MB", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--trace", action="store_true", help="print the largest allocations")
    parser.add_argument("--every", type=float, default=30.0, help="progress interval (s)")
    parser.add_argument("--deadline", type=float, default=4 * 3600.0, help="stop waiting (s)")
    args = parser.parse_args()
    out = Path(tempfile.mkstemp(prefix="agent-trace-", suffix=".txt")[1])
    os.environ["SYNCAGENT_TRACE_OUT"] = str(out)
    launcher = (str(REPO / "bench" / "traced_agent.py"),) if args.trace else None
    with ControlPlane(extra_crds=sorted((REPO / "crds").glob("*.yaml"))) as plane:
        config = KubeConfig.from_file(str(plane.kubeconfig))
        kube = Kube(Client(config=config, field_manager="bench", timeout=httpx2.Timeout(300.0)))
        floor.create_graphs(kube, "agent", args.graphs)
        # Under tracemalloc the agent starts slowly on a loaded machine.
        kw = {"launcher": launcher, "start_deadline": 600.0} if launcher else {}
        flags = ("--concurrency", str(args.concurrency), "--resync-period", "3600s")
        agent = Agent(plane.kubeconfig, *flags, namespace="agent", **kw)
        try:
            converge(kube, agent, args)
            if args.trace:
                out.write_text("")
                agent.proc.send_signal(signal.SIGUSR1)
                eventually(lambda: out.read_text(), deadline=600, what="the allocation dump")
                print(out.read_text())
        finally:
            agent.stop()
            out.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
