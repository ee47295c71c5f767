"""Figures for the running agent: convergence of N graphs and the cost of a full resync.

    python3 bench/agent_resync.py [--graphs 50] [--resyncs 3] [--resync-period 5]

Starts its own control plane (the test one: kube-apiserver + etcd + garbage collector), creates
N two-component graphs, runs ``syncagent run`` as a subprocess, simulates workload readiness
(there is no kubelet), and prints from the agent's own /metrics:
- requests and writes until every graph is Ready, and how long that took;
- requests and writes per full resync once converged (the target is 0 writes).
Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from lightkube import Client, KubeConfig

REPO = Path(__file__).resolve().parent.parent
# The test support package (the agent subprocess, metrics parsing, raw API calls).
sys.path.insert(0, str(REPO))

from syncagent.devcluster import ControlPlane  # noqa: E402
from tests.support.agent import running_agent  # noqa: E402
from tests.support.fake_workloads import simulate_ready  # noqa: E402
from tests.support.graphs import component, graph  # noqa: E402
from tests.support.kube import Kube, ready_reason  # noqa: E402
from tests.support.polling import eventually  # noqa: E402

RECONCILE_VERBS = ("get", "patch", "create", "update", "delete")


def reconcile_requests(metrics) -> float:
    return metrics.requests(verbs=RECONCILE_VERBS, exclude=("", "leases", "events"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=50)
    parser.add_argument("--resyncs", type=int, default=3)
    parser.add_argument("--resync-period", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    crds = sorted((REPO / "crds").glob("*.yaml"))
    with ControlPlane(extra_crds=crds) as plane:
        client = Client(config=KubeConfig.from_file(str(plane.kubeconfig)), field_manager="bench")
        kube = Kube(client)
        ns = "bench"
        kube.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        )
        names = [f"g{i:03d}" for i in range(args.graphs)]
        for name in names:
            kube.create(
                graph(ns, name, [component("frontend", "frontend"), component("decode", "decode")])
            )
        flags = (
            "--resync-period",
            f"{args.resync_period}s",
            "--concurrency",
            str(args.concurrency),
        )
        with running_agent(plane.kubeconfig, *flags, namespace=ns) as agent:
            start = time.monotonic()

            def all_ready() -> bool:
                simulate_ready(kube, ns)
                return all(ready_reason(kube, ns, n) == "all_resources_are_ready" for n in names)

            eventually(all_ready, deadline=900, what="all graphs Ready")
            took = time.monotonic() - start
            converged = agent.scrape()
            print(f"graphs: {args.graphs} (2 components each), Ready after {took:.1f}s")
            print(
                f"convergence: {reconcile_requests(converged):.0f} reconcile requests, "
                f"{converged.writes():.0f} writes, "
                f"{converged.requests(dry_run='true'):.0f} dry runs"
            )
            for i in range(args.resyncs + 1):
                before = agent.scrape()
                base = before.sum("syncagent_reconcile_total", controller="dgd")
                after = eventually(
                    lambda b=base: (
                        (m := agent.scrape()).sum("syncagent_reconcile_total", controller="dgd")
                        >= b + args.graphs
                        and m
                    ),
                    deadline=args.resync_period * 4 + 60,
                    what="a full resync",
                )
                label = "settling resync" if i == 0 else f"resync {i}"
                print(
                    f"{label}: {reconcile_requests(after) - reconcile_requests(before):.0f} "
                    f"requests, {after.writes() - before.writes():.0f} writes "
                    f"(all requests incl. watches/discovery: {after.requests() - before.requests():.0f})"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
