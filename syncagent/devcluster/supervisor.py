"""The long-lived process behind ``syncagent dev-cluster up``.

It owns the control plane's processes (they die with it) and stops them in order on SIGTERM.
``state.json`` appears in the state folder once the control plane is ready.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from syncagent.devcluster.controlplane import ControlPlane

STATE_FILE = "state.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m syncagent.devcluster.supervisor")
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--lws-version", required=True)
    parser.add_argument("--crd", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    plane = ControlPlane(
        lws_version=args.lws_version, extra_crds=args.crd, workdir=args.state / "cp"
    )
    with plane:
        state = {
            "server": plane.server,
            "version": plane.version,
            "kubeconfig": str(plane.kubeconfig),
            "lws_version": plane.lws_version,
            "pids": plane.pids,
        }
        (args.state / STATE_FILE).write_text(json.dumps(state, indent=2))
        stop.wait()
    (args.state / STATE_FILE).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
