"""The multinode launch text upstream's operator puts in a leader's or worker's ``main``.

Written from ai-dynamo/dynamo 2a6da14c8 deploy/operator/internal/dynamo (backend_sglang.go,
backend_vllm.go, backend_trtllm.go, utils.go ``injectFlagsIntoContainerCommand``, lws.go and
grove.go for the leader address and node rank), independently of syncagent's renderer: the
parity tier checks the rendered templates against it. Pure.

:func:`expected_launch` returns the fragments that must appear, in ``command + args`` joined by
spaces, and whether upstream injects anything at all (when it does not, no launch flag may
appear either).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SGLANG_PORT = "29500"
VLLM_MP_MASTER_PORT = "29500"
RAY_PORT = "6379"
DP_RPC_PORT = "13445"
EXECUTOR_ANNOTATION = "nvidia.com/vllm-distributed-executor-backend"
ORIGIN_ANNOTATION = "nvidia.com/dynamo-operator-origin-version"
# Flags only a multinode launch adds; none may appear where upstream injects nothing.
LAUNCH_MARKERS = ("--dist-init-addr", "--node-rank", "--master-addr", "ray start", "mpirun")
_PYTHON = re.compile(r"^(.*/)?(python\d*(\.\d+)*)$")


@dataclass(frozen=True, slots=True)
class Deployer:
    leader: str
    rank: str
    rank_needs_shell: bool


def lws_deployer() -> Deployer:
    """LeaderWorkerSet and DisaggregatedSet children (lws.go)."""
    return Deployer("$(LWS_LEADER_ADDRESS)", "$(LWS_WORKER_INDEX)", False)


def grove_deployer(component: str) -> Deployer:
    """Grove cliques (grove.go, not the inter-pod GMS layout)."""
    leader = (
        f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{component.lower()}-ldr-0."
        "$(GROVE_HEADLESS_SERVICE)"
    )
    return Deployer(leader, "$((GROVE_PCLQ_POD_INDEX + 1))", True)


@dataclass(frozen=True, slots=True)
class Launch:
    fragments: tuple[str, ...]  # each must appear in the joined command line

    @property
    def injects(self) -> bool:
        return bool(self.fragments)


def backend_of(graph_spec: Mapping[str, Any], component: Mapping[str, Any]) -> str:
    """graph.go ``determineBackendFramework``: none for non-worker types; else the backend the
    main command line runs (``python… -m … dynamo.<b>``), else ``backendFramework``."""
    if component.get("type") not in ("worker", "prefill", "decode"):
        return ""
    main = next(
        c for c in component["podTemplate"]["spec"]["containers"] if c.get("name") == "main"
    )
    line = " ".join([*(main.get("command") or []), *(main.get("args") or [])])
    found = [
        b
        for b in ("vllm", "sglang", "trtllm")
        if re.search(rf"python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*dynamo\.{b}[^|&;]*", line)
    ]
    if len(found) == 1:
        return found[0]
    return str(graph_spec.get("backendFramework") or "")


def expected_launch(
    *,
    backend: str,
    role: str,
    nodes: int,
    main: Mapping[str, Any],
    annotations: Mapping[str, str],
    deployer: Deployer,
) -> Launch:
    if nodes <= 1:
        return Launch(())
    if backend == "trtllm":
        return Launch(("mpirun", "--oversubscribe") if role == "leader" else ("sshd -D",))
    if backend == "sglang":
        rank = "0" if role == "leader" else deployer.rank
        return _injected(
            main,
            f"--dist-init-addr {deployer.leader}:{SGLANG_PORT} --nnodes {nodes} --node-rank {rank}",
            "sglang",
        )
    if backend == "vllm":
        return _vllm(role=role, nodes=nodes, main=main, annotations=annotations, d=deployer)
    return Launch(())


def _injected(main: Mapping[str, Any], flags: str, framework: str) -> Launch:
    """``injectFlagsIntoContainerCommand``: a python command takes the flags; otherwise the
    first arg running ``python … <framework>`` does; otherwise nothing is injected."""
    command = list(main.get("command") or [])
    if command and _PYTHON.match(command[0]):
        return Launch((flags,))
    pattern = re.compile(rf"(python[0-9.]*\s+[^|&;]*{framework}[^|&;]*?)(\s|$|[|&;])")
    if any(pattern.search(str(arg)) for arg in main.get("args") or []):
        return Launch((flags,))
    return Launch(())


def _expanded(main: Mapping[str, Any]) -> list[str]:
    return [token for arg in main.get("args") or [] for token in str(arg).split()]


def _flag(args: Sequence[str], flag: str) -> int:
    for i, arg in enumerate(args[:-1]):
        if arg == flag and args[i + 1].isdigit():
            return int(args[i + 1])
    return 1


def container_gpus(main: Mapping[str, Any]) -> int:
    resources = main.get("resources") or {}
    for block in ("limits", "requests"):
        value = (resources.get(block) or {}).get("nvidia.com/gpu")
        if value is not None:
            return int(str(value))
    return 0


def uses_mp(annotations: Mapping[str, str]) -> bool:
    """The annotation first; then the origin-version gate (< 1.0.0 is Ray); a graph with no
    origin version gets mp (syncagent's design: upstream stamps >= 1.0 on every graph)."""
    override = annotations.get(EXECUTOR_ANNOTATION, "").lower()
    if override in ("mp", "ray"):
        return override == "mp"
    origin = annotations.get(ORIGIN_ANNOTATION)
    if not origin:
        return True
    major = re.match(r"v?(\d+)", origin)
    return bool(major) and int(major.group(1)) >= 1  # type: ignore[union-attr]


def _vllm(
    *, role: str, nodes: int, main: Mapping[str, Any], annotations: Mapping[str, str], d: Deployer
) -> Launch:
    args = _expanded(main)
    gpus = container_gpus(main)
    world = _flag(args, "--tensor-parallel-size") * _flag(args, "--pipeline-parallel-size")
    if gpus and world > gpus:
        if not uses_mp(annotations):
            if role == "leader":
                return Launch(
                    (
                        f"ray start --head --port={RAY_PORT} && ",
                        "--distributed-executor-backend ray",
                    )
                )
            return Launch((f"ray start --address={d.leader}:{RAY_PORT} --block",))
        flags = (
            f"--distributed-executor-backend mp --nnodes {nodes} --master-addr {d.leader} "
            f"--master-port {VLLM_MP_MASTER_PORT}"
        )
        flags += " --node-rank 0" if role == "leader" else f" --node-rank {d.rank} --headless"
        return _injected(main, flags, "vllm")
    if "--enable-elastic-ep" in args:
        if role == "leader":
            return Launch((f"ray start --head --port={RAY_PORT} --block & ",))
        return Launch((f"ray start --address={d.leader}:{RAY_PORT} --block",))
    dp = _flag(args, "--data-parallel-size")
    if gpus and world * dp > gpus:
        local = gpus // world
        total = local * nodes if dp == 1 else dp
        start = "0" if role == "leader" else f"$(( {local} * {d.rank} ))"
        flags = ["--data-parallel-hybrid-lb"]
        if "--data-parallel-size" not in args:
            flags += ["--data-parallel-size", str(total)]
        flags += [
            "--data-parallel-size-local",
            str(local),
            "--data-parallel-start-rank",
            start,
            "--data-parallel-address",
            d.leader,
            "--data-parallel-rpc-port",
            DP_RPC_PORT,
        ]
        return _injected(main, " ".join(flags), "vllm")
    return Launch(())
