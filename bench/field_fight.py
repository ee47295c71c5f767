"""Figures for a field fight: how fast the agent names a second writer and how the flip-flop ends.

    python3 bench/field_fight.py [--period 2] [--after 10] [--threshold 3]

Starts its own control plane (the test one), converges a one-component graph with
``syncagent run`` as a subprocess, then runs a second server-side-apply writer: the real pinned
``kubectl apply --server-side --force-conflicts`` of ``spec.replicas`` every ``--period`` seconds
(what an HPA or a still-running old operator does). Prints, from a watch on the Deployment and
the agent's own /metrics:
- seconds from the fighter's first apply to the ``FieldFight`` event on the graph;
- the agent's take-backs (flips back to its value) and writes before detection;
- over the next ``--after`` fighter applies: flips, agent writes to Deployments, API requests.
Prints figures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from lightkube import Client, KubeConfig

REPO = Path(__file__).resolve().parent.parent
# The test support package (the agent subprocess, kubectl, raw API calls): ``tests.support``.
sys.path.insert(0, str(REPO))

from syncagent.devcluster import ControlPlane, ensure_binaries  # noqa: E402
from tests.support.agent import running_agent  # noqa: E402
from tests.support.fake_workloads import become_ready  # noqa: E402
from tests.support.graphs import component, graph  # noqa: E402
from tests.support.kube import Kube, events_for  # noqa: E402
from tests.support.kubectl import FieldWatch, Fighter, Kubectl  # noqa: E402
from tests.support.polling import eventually  # noqa: E402

NS, NAME, DEPLOYMENT = "bench", "ff", "ff-frontend"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--period", type=float, default=2.0, help="seconds between the fighter's applies"
    )
    parser.add_argument(
        "--after", type=int, default=10, help="fighter applies observed after detection"
    )
    parser.add_argument("--threshold", type=int, default=3, help="the agent's --fight-threshold")
    args = parser.parse_args()
    crds = sorted((REPO / "crds").glob("*.yaml"))
    kubectl_binary = ensure_binaries().kubectl
    with ControlPlane(extra_crds=crds) as plane:
        client = Client(config=KubeConfig.from_file(str(plane.kubeconfig)), field_manager="bench")
        kube = Kube(client)
        kube.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        )
        kube.create(graph(NS, NAME, [component("Frontend", "frontend")]))
        flags = ("--fight-threshold", str(args.threshold))
        with running_agent(plane.kubeconfig, *flags, namespace=NS) as agent:
            become_ready(kube, NS, NAME, deadline=120)
            ours = kube.get("Deployment", NS, DEPLOYMENT)["spec"]["replicas"]
            theirs = ours + 3
            patch = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": DEPLOYMENT, "namespace": NS},
                "spec": {"replicas": theirs},
            }
            kubectl = Kubectl(kubectl_binary, plane.kubeconfig, NS)
            writes_before = agent.scrape().writes(resource="deployments")
            with (
                FieldWatch(
                    kube, "Deployment", NS, DEPLOYMENT, lambda o: o["spec"]["replicas"]
                ) as watch,
                Fighter(kubectl, patch, "hpa-like", period=args.period) as fighter,
            ):
                started = time.monotonic()
                eventually(
                    lambda: events_for(kube, NS, NAME, "FieldFight"),
                    deadline=600,
                    what="the FieldFight event",
                )
                detected = time.monotonic()
                applies_before = fighter.applies
                metrics = agent.scrape()
                writes_at_detection = metrics.writes(resource="deployments")
                requests_at_detection = metrics.requests()
                fighter.wait_applies(args.after, deadline=args.after * args.period * 5 + 60)
                metrics = agent.scrape()
                flips_before = watch.changes(ours, since=started, until=detected)
                flips_after = watch.changes(ours, since=detected)
                writes_after = metrics.writes(resource="deployments") - writes_at_detection
                requests_after = metrics.requests() - requests_at_detection
                final = kube.get("Deployment", NS, DEPLOYMENT)["spec"]["replicas"]
    print(
        f"fighter: kubectl apply --server-side --force-conflicts every {args.period}s, "
        f"agent --fight-threshold {args.threshold}"
    )
    print(f"FieldFight event after {detected - started:.1f}s ({applies_before} fighter applies)")
    print(
        f"before detection: {flips_before} take-backs by the agent, "
        f"{writes_at_detection - writes_before:.0f} agent writes to Deployments"
    )
    print(
        f"after detection, over {args.after} fighter applies: {flips_after} take-backs, "
        f"{writes_after:.0f} agent writes to Deployments, {requests_after:.0f} agent API "
        f"requests (all kinds); replicas stays {final} (the fighter's {theirs})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
