"""The long-lived process behind ``syncagent dev-cluster up``.

It owns the cluster's processes (they die with it) and stops them in order on SIGTERM.
``state.json`` appears in the state folder once the cluster is ready; its ``kind`` says whether
it is the simulated full cluster (``full``) or the bare control plane (``bare``).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from syncagent.devcluster.controlplane import ControlPlane
from syncagent.devcluster.simcluster import SimulatedCluster

STATE_FILE = "state.json"
FULL, BARE = "full", "bare"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m syncagent.devcluster.supervisor")
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--lws-version", required=True)
    parser.add_argument("--crd", type=Path, action="append", default=[])
    parser.add_argument("--bare", action="store_true")
    parser.add_argument("--nodes", type=int, default=0)
    parser.add_argument("--grove-source", type=Path, default=None)
    args = parser.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    workdir = args.state / "cp"
    plane: ControlPlane
    if args.bare:
        plane = ControlPlane(lws_version=args.lws_version, extra_crds=args.crd, workdir=workdir)
    else:
        plane = SimulatedCluster(
            nodes=args.nodes,
            lws_version=args.lws_version,
            extra_crds=args.crd,
            workdir=workdir,
            grove_source=args.grove_source,
        )
    with plane:
        state = {
            "kind": BARE if args.bare else FULL,
            "server": plane.server,
            "version": plane.version,
            "kubeconfig": str(plane.kubeconfig),
            "lws_version": plane.lws_version,
            "nodes": 0 if args.bare else args.nodes,
            "grove_operator": bool(args.grove_source) and not args.bare,
            "description": plane.describe(),
            "pids": plane.pids,
        }
        (args.state / STATE_FILE).write_text(json.dumps(state, indent=2))
        stop.wait()
    (args.state / STATE_FILE).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
