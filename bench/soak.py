"""The agent under churn for a long while: does anything grow? (issue 30)

    python3 bench/soak.py [--graphs 200] [--minutes 30] [--rate 2] [--every 10] [--warmup 5]

Starts its own control plane (the test one: kube-apiserver + etcd + garbage collector), creates
N graphs of two components (frontend, decode), runs ``syncagent run`` until the agent has
observed every one, then churns them for ``--minutes`` (edits, replica changes, deletes and
re-creates, other writers' labels on their Deployments and Services: ``--rate`` operations a
second) while sampling the agent's ``/metrics`` every ``--every`` seconds: RSS, open file
descriptors, asyncio tasks, watch-cache objects, in-memory tables, work-queue depth. Prints each
sample, then each series' least-squares slope per 10 minutes after ``--warmup`` minutes, and the
missed changes once the churn has stopped and the agent is idle: objects missing or unlike
``syncagent render`` of the live graphs, and objects of the agent's no graph renders or whose
owner is gone. The code is ``tests/chaos/support/soak.py``; the chaos tier runs it for 3
minutes (``tests/chaos/test_soak.py``). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import httpx2
from lightkube import Client, KubeConfig

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the test support package: agent subprocess, raw API calls

from syncagent.devcluster import ControlPlane  # noqa: E402
from tests.chaos.support.soak import SERIES, Sample, run_soak, settled, slope, soak_graph  # noqa: E402
from tests.support.agent import Agent  # noqa: E402
from tests.support.kube import Kube  # noqa: E402
from tests.support.polling import eventually  # noqa: E402

NAMESPACE = "soak"


def show(s: Sample) -> None:
    values = " ".join(
        f"{k}={v:.1f}" if k == "rss_mb" else f"{k}={v:.0f}" for k, v in s.values.items()
    )
    print(f"t={s.seconds:6.0f}s {values}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=2.0, help="churn operations a second")
    parser.add_argument("--every", type=float, default=10.0, help="sample interval (s)")
    parser.add_argument("--warmup", type=float, default=5.0, help="minutes left out of slopes")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with ControlPlane(extra_crds=sorted((REPO / "crds").glob("*.yaml"))) as plane:
        config = KubeConfig.from_file(str(plane.kubeconfig))
        kube = Kube(Client(config=config, field_manager="bench", timeout=httpx2.Timeout(300.0)))
        kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        names = [f"g{i:04d}" for i in range(args.graphs)]
        for name in names:
            kube.create(soak_graph(NAMESPACE, name))
        # A missed change must not be rescued by a resync within the run.
        flags = ("--concurrency", str(args.concurrency), "--resync-period", "24h")
        agent = Agent(plane.kubeconfig, *flags, namespace=NAMESPACE, start_deadline=120.0)
        try:
            start = time.monotonic()
            eventually(
                lambda: settled(kube, NAMESPACE, agent),
                deadline=3600,
                what="first convergence",
                interval=5.0,
            )
            print(
                f"{args.graphs} graphs observed after {time.monotonic() - start:.0f}s", flush=True
            )
            run = run_soak(
                kube,
                agent,
                NAMESPACE,
                names,
                seconds=args.minutes * 60,
                rate=args.rate,
                every=args.every,
                on_sample=show,
            )
        finally:
            agent.stop()
            agent.discard_log()
    ops = ", ".join(f"{k} {v}" for k, v in sorted(run.operations.items()))
    print(f"churn: {ops}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    after = args.warmup * 60
    for name in SERIES:
        first = next((s.values[name] for s in run.samples if s.seconds >= after), 0.0)
        print(
            f"{name}: slope {slope(run.samples, name, after=after):+.2f} per 10 min after "
            f"{args.warmup:g} min (from {first:.1f}, peak {run.peak(name):.1f}, "
            f"last {run.samples[-1].values[name]:.1f})"
        )
    missed = run.missed
    print(f"missed changes: {len(missed)}; {run.inventory.summary() if run.inventory else ''}")
    for line in missed[:20]:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
