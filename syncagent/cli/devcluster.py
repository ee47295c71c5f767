"""``syncagent dev-cluster up|down|env``: a real local control plane for trying syncagent out."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from syncagent.api import crdgen
from syncagent.cli.errors import UserError
from syncagent.devcluster import build, ensure_binaries, versions
from syncagent.devcluster.gomod import GoModuleError
from syncagent.devcluster.supervisor import STATE_FILE

_UP_DEADLINE = 300.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "dev-cluster",
        help="start, stop or locate a local control plane with every CRD syncagent uses",
        description=(
            "A real etcd + kube-apiserver + kube-controller-manager (garbage collector and namespace "
            "controllers) on loopback, built from pinned Go modules and cached in "
            f"{build.cache_root()}. Honours KUBEBUILDER_ASSETS."
        ),
    )
    parser.add_argument("--name", default="default", help="which local cluster (default: default)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    up = actions.add_parser("up", help="build if needed, start, and print the server version")
    up.add_argument(
        "--lws-version",
        default=versions.DEFAULT_LWS,
        choices=versions.LWS_VERSIONS,
        help="which LeaderWorkerSet/DisaggregatedSet CRDs to install",
    )
    up.add_argument(
        "--crd",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="an extra CRD file to install (repeatable)",
    )
    up.set_defaults(func=_up)
    down = actions.add_parser("down", help="stop the cluster and delete its data")
    down.set_defaults(func=_down)
    env = actions.add_parser("env", help="print the shell line that points kubectl at it")
    env.set_defaults(func=_env)


def _state_dir(name: str) -> Path:
    return build.cache_root() / "dev-cluster" / name


def _read_state(name: str) -> dict[str, object] | None:
    path = _state_dir(name) / STATE_FILE
    return json.loads(path.read_text()) if path.exists() else None


def _up(args: argparse.Namespace) -> int:
    state = _read_state(args.name)
    if state:
        print(f"dev-cluster/{args.name} already running: {state['server']} ({state['version']})")
        print(f"export KUBECONFIG={state['kubeconfig']}")
        return 0
    try:
        ensure_binaries()
    except GoModuleError as err:
        raise UserError(f"dev-cluster/{args.name}: cannot build the control plane: {err}") from err
    folder = _state_dir(args.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # Our own CRDs, generated from the models, so a plain `pip install` has them too.
    ours = crdgen.write(folder / "crds")
    crds = [f"--crd={p.resolve()}" for p in (*ours, *args.crd)]
    cmd = [
        sys.executable,
        "-m",
        "syncagent.devcluster.supervisor",
        f"--state={folder}",
        f"--lws-version={args.lws_version}",
        *crds,
    ]
    with (folder / "supervisor.log").open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    (folder / "supervisor.pid").write_text(str(proc.pid))
    state = _wait_for_state(args.name, proc)
    print(f"dev-cluster/{args.name}: kube-apiserver {state['version']} at {state['server']}")
    print(f"export KUBECONFIG={state['kubeconfig']}")
    return 0


def _wait_for_state(name: str, proc: subprocess.Popen[bytes]) -> dict[str, object]:
    end = time.monotonic() + _UP_DEADLINE
    while time.monotonic() < end:
        state = _read_state(name)
        if state:
            return state
        if proc.poll() is not None:
            tail = (_state_dir(name) / "supervisor.log").read_text(errors="replace")[-2000:]
            raise UserError(f"dev-cluster/{name}: failed to start:\n{tail}")
        time.sleep(0.2)
    proc.terminate()
    raise UserError(
        f"dev-cluster/{name}: not ready after {_UP_DEADLINE:.0f}s; see {_state_dir(name)}"
    )


def _down(args: argparse.Namespace) -> int:
    folder = _state_dir(args.name)
    pid_file = folder / "supervisor.pid"
    if not pid_file.exists():
        print(f"dev-cluster/{args.name} is not running")
        return 0
    pid = int(pid_file.read_text())
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + 30
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"dev-cluster/{args.name} stopped")
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def _env(args: argparse.Namespace) -> int:
    state = _read_state(args.name)
    if not state:
        raise UserError(
            f"dev-cluster/{args.name}: not running; start it with `syncagent dev-cluster up`"
        )
    print(f"export KUBECONFIG={state['kubeconfig']}")
    return 0
