"""``syncagent dev-cluster up|down|env``: a real local cluster for trying syncagent out: what it does (flags: ``syncagent.cli.dev_cluster``)."""

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
from typing import Any

from syncagent.api import crdgen
from syncagent.cli.errors import UserError
from syncagent.devcluster import build, ensure_binaries, grove_operator, versions
from syncagent.devcluster.gomod import GoModuleError
from syncagent.devcluster.simcluster import DEFAULT_NODES, ensure_tools
from syncagent.devcluster.supervisor import BARE, FULL, STATE_FILE

_UP_DEADLINE = 300.0


def _state_dir(name: str) -> Path:
    return build.cache_root() / "dev-cluster" / name


def _read_state(name: str) -> dict[str, Any] | None:
    """The running cluster's state; a state left by a supervisor that died is removed."""
    folder = _state_dir(name)
    path = folder / STATE_FILE
    if not path.exists():
        return None
    if _supervisor(name) is None:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    state: dict[str, Any] = json.loads(path.read_text())
    return state


def _supervisor(name: str) -> int | None:
    """The pid of the cluster's supervisor while it is alive."""
    pid_file = _state_dir(name) / "supervisor.pid"
    if not pid_file.exists():
        return None
    pid = int(pid_file.read_text())
    return pid if _alive(pid) else None


def up(args: argparse.Namespace) -> int:
    kind = BARE if args.bare else FULL
    where = f"dev-cluster/{args.name}"
    _check_up_flags(args, where=where)
    state = _read_state(args.name)
    if state:
        running = state.get("kind", BARE)
        if running != kind:
            raise UserError(
                f"{where}: a {_KIND_WORDS[running]} already runs under this name; stop it with "
                f"`syncagent dev-cluster down --name {args.name}` or choose another --name"
            )
        print(f"{where} already running: {state['server']} ({state['version']})")
        print(f"export KUBECONFIG={state['kubeconfig']}")
        return 0
    starting = _supervisor(args.name)
    if starting is not None:
        raise UserError(
            f"{where}: still starting (supervisor pid {starting}); run `syncagent dev-cluster "
            f"up --name {args.name}` again once it is up, or `down` it"
        )
    grove = _grove_source(args, where=where) if kind == FULL else None
    try:
        ensure_binaries()
        if kind == FULL:
            ensure_tools(args.lws_version, grove_source=grove)
    except (GoModuleError, grove_operator.GroveSourceError) as err:
        raise UserError(f"{where}: cannot build the cluster: {err}") from err
    folder = _state_dir(args.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # Our own CRDs, generated from the models, so a plain `pip install` has them too.
    ours = crdgen.write(folder / "crds", pathways=args.programs.pathways)
    crds = [f"--crd={p.resolve()}" for p in (*ours, *args.crd)]
    shape = ["--bare"] if kind == BARE else [f"--nodes={args.nodes or DEFAULT_NODES}"]
    shape += [f"--grove-source={grove.resolve()}"] if grove else []
    cmd = [
        sys.executable,
        "-m",
        "syncagent.devcluster.supervisor",
        f"--state={folder}",
        f"--lws-version={args.lws_version}",
        *shape,
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
    print(f"{where}: {state['description']}")
    print(f"export KUBECONFIG={state['kubeconfig']}")
    return 0


_KIND_WORDS = {FULL: "simulated full cluster", BARE: "bare control plane (--bare)"}


def _grove_source(args: argparse.Namespace, *, where: str) -> Path | None:
    """The Grove source tarball, said plainly either way: the proxy does not serve Grove."""
    found = grove_operator.find_source(args.grove_source)
    if found is None:
        print(
            f"{where}: no Grove operator: {versions.GROVE_SOURCE} is not in "
            "$SYNCAGENT_REFERENCE/source (default ../shared/reference next to the checkout), "
            "and the Go module proxy does not serve Grove; the cluster serves Grove's CRDs only "
            "and nothing acts on a PodCliqueSet. Name the tarball with --grove-source to run it."
        )
        return None
    try:
        grove_operator.check_source(found)
    except grove_operator.GroveSourceError as err:
        raise UserError(f"{where}: --grove-source: {err}") from err
    print(f"{where}: Grove operator {versions.GROVE} from {found}")
    return found


def _check_up_flags(args: argparse.Namespace, *, where: str) -> None:
    if args.bare and args.grove_source is not None:
        raise UserError(f"{where}: --grove-source needs the simulated cluster; drop --bare")
    if args.bare and args.nodes is not None:
        raise UserError(f"{where}: --nodes needs the simulated cluster; drop --bare or --nodes")
    if args.nodes is not None and args.nodes < 1:
        raise UserError(f"{where}: --nodes must be at least 1")
    if not args.bare and args.lws_version not in versions.LWS_MANAGER_VERSIONS:
        raise UserError(
            f"{where}: LeaderWorkerSet {args.lws_version} has no manager to run (the Go module "
            "proxy does not serve that version); add --bare to get its CRDs on a bare control "
            f"plane, or use --lws-version {versions.DEFAULT_LWS}"
        )


def _wait_for_state(name: str, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
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


def down(args: argparse.Namespace) -> int:
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


def env(args: argparse.Namespace) -> int:
    state = _read_state(args.name)
    if not state:
        raise UserError(
            f"dev-cluster/{args.name}: not running; start it with `syncagent dev-cluster up`"
        )
    print(f"export KUBECONFIG={state['kubeconfig']}")
    return 0
