"""Figures for the agent over many namespaces: convergence and Lease renewals with every kind
watched per namespace (issue 40: 100 idle watches once held the agent's only pool).

    python3 bench/many_namespaces.py [--namespaces 40] [--renewals 30]

Starts its own control plane (the test one), creates the namespaces with a Component graph in
each, runs ``syncagent run --namespace ...`` with leader election and the DisaggregatedSet and
Grove kinds served (18 watches a namespace: about 720 for 40), simulates workload readiness,
then edits the graph of the last namespace. Prints how long every graph took to become Ready,
how long the edit took to reach its Deployment, and the Lease renewals' latency (p50, p99,
worst) read from the Lease's stored ``renewTime``s (tests/cluster/support/many_namespaces.py).
The cluster tier runs the same over 8 namespaces (tests/cluster/test_agent_many_namespaces.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lightkube import Client, KubeConfig

REPO = Path(__file__).resolve().parent.parent
# The test support package (the agent subprocess, raw API calls, the scenario itself).
sys.path.insert(0, str(REPO))

from syncagent.devcluster import ControlPlane  # noqa: E402
from tests.cluster.support import many_namespaces  # noqa: E402
from tests.support.kube import Kube  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", type=int, default=40)
    parser.add_argument("--renewals", type=int, default=30, help="stored renewals to wait for")
    args = parser.parse_args()
    crds = sorted((REPO / "crds").glob("*.yaml"))
    with ControlPlane(extra_crds=crds) as plane:
        client = Client(config=KubeConfig.from_file(str(plane.kubeconfig)), field_manager="bench")
        names = many_namespaces.create_namespaces(client, "bench", args.namespaces)
        figures = many_namespaces.run(plane.kubeconfig, Kube(client), names, renewals=args.renewals)
    print(figures.report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
