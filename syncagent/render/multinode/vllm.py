"""vLLM on several nodes (upstream ``backend_vllm.go``).

On a multinode component the ``main`` container's args decide the launch:

- tensor x pipeline parallel size larger than the container's GPUs: one engine spans the
  nodes, with the ``mp`` executor (leader ``--node-rank 0``, workers ``--headless`` and a
  ``wait-for-leader-mp`` init container) or Ray (leader ``ray start --head``, workers join);
- else ``--enable-elastic-ep``: one Ray cluster over all nodes (the workers join once the
  leader serves);
- else data parallel larger than the GPUs: one engine group per node (hybrid load balancing);
- else nothing.

Workers lose every probe. With ``mp`` every pod also gets ``VLLM_NIXL_SIDE_CHANNEL_HOST`` from
its pod IP. A single-pod elastic-EP component with the Ray data-parallel backend heads a Ray
cluster for followers that join later.
"""

from __future__ import annotations

import re
from typing import Any

from syncagent.render.multinode.executor import uses_mp
from syncagent.render.multinode.inject import inject_flags
from syncagent.render.multinode.launch import Launch, add_env, drop_probes, pod_ip_env
from syncagent.render.multinode.shell import (
    command_line_has_arg,
    expanded,
    flag_value,
    has_arg,
    has_flag,
    quote_for_bash_c,
    quote_posix,
)
from syncagent.render.multinode.waitleader import (
    SCRIPT_KEY,
    SCRIPT_MOUNT,
    VOLUME,
    config_map_name,
)

RAY_PORT = "6379"
MP_MASTER_PORT = "29500"
DP_RPC_PORT = "13445"
SYSTEM_PORT = 9090
TP = "--tensor-parallel-size"
PP = "--pipeline-parallel-size"
DP = "--data-parallel-size"
DP_LOCAL = "--data-parallel-size-local"
EXECUTOR = "--distributed-executor-backend"
ELASTIC_EP = "--enable-elastic-ep"
NIXL_SIDE_CHANNEL_HOST = "VLLM_NIXL_SIDE_CHANNEL_HOST"
WAIT_FOR_LEADER = "wait-for-leader-mp"
SHELL = ["/bin/sh", "-c"]


def update_container(container: dict[str, Any], launch: Launch) -> None:
    if launch.multinode:
        multinode_args(container, launch, gpus=launch.gpus())
        if _mp(launch):
            add_env(container, pod_ip_env(NIXL_SIDE_CHANNEL_HOST))
        if launch.role == "worker":
            drop_probes(container)
    elif (
        launch.role == "main"
        and is_elastic_ep_ray_launch(container)
        and elastic_ep_ray(container, launch)
    ):
        # The Ray head registers under the pod IP and vLLM looks for the DP master there.
        add_env(container, pod_ip_env("POD_IP"))
        add_env(container, pod_ip_env("VLLM_DP_MASTER_IP"))


def multinode_args(container: dict[str, Any], launch: Launch, *, gpus: int) -> None:
    tokens = expanded(container.get("args") or [])
    spans_nodes = gpus != 0 and world_size(tokens) > gpus
    if spans_nodes and _mp(launch):
        mp_launch(container, launch)
    elif spans_nodes:
        ray_launch(container, launch)
    elif has_flag(tokens, ELASTIC_EP):
        elastic_ep_ray(container, launch)
    elif gpus != 0 and world_size(tokens) * flag_value(tokens, DP) > gpus:
        data_parallel_launch(container, launch, gpus=gpus)


def world_size(tokens: list[str]) -> int:
    return flag_value(tokens, TP) * flag_value(tokens, PP)


def mp_launch(container: dict[str, Any], launch: Launch) -> None:
    leader = launch.deployer.leader_hostname(launch.service)
    flags = f"{EXECUTOR} mp --nnodes {launch.nodes} --master-addr {leader} --master-port {MP_MASTER_PORT}"
    needs_shell = False
    if launch.role == "leader":
        flags += " --node-rank 0"
    elif launch.role == "worker":
        rank, needs_shell = launch.deployer.node_rank()
        flags += f" --node-rank {rank} --headless"
    inject_flags(container, flags, needs_shell=needs_shell, framework="vllm")


def ray_launch(container: dict[str, Any], launch: Launch) -> None:
    if launch.role == "leader":
        command = " ".join(quote_for_bash_c(t) for t in container.get("command") or [])
        args = " ".join(quote_for_bash_c(t) for t in container.get("args") or [])
        head = f"ray start --head --port={RAY_PORT}"
        container["args"] = [f"{head} && {command} {args} {EXECUTOR} ray"]
    elif launch.role == "worker":
        leader = launch.deployer.leader_hostname(launch.service)
        # Only the Ray agent runs here; vLLM on the leader places its actors on this node.
        container["args"] = [f"ray start --address={leader}:{RAY_PORT} --block"]
    container["command"] = list(SHELL)


def data_parallel_launch(container: dict[str, Any], launch: Launch, *, gpus: int) -> None:
    tokens = expanded(container.get("args") or [])
    leader = launch.deployer.leader_hostname(launch.service)
    local = _go_div(gpus, world_size(tokens))
    total = flag_value(tokens, DP)
    if total == 1:
        total = local * launch.nodes
    if launch.role == "leader":
        start, needs_shell = "0", False
    else:
        rank, _ = launch.deployer.node_rank()
        start, needs_shell = f"$(( {local} * {rank} ))", True
    flags = ["--data-parallel-hybrid-lb"]
    if not has_flag(tokens, DP):
        flags += [DP, str(total)]
    flags += [DP_LOCAL, str(local), "--data-parallel-start-rank", start]
    flags += ["--data-parallel-address", leader, "--data-parallel-rpc-port", DP_RPC_PORT]
    inject_flags(container, " ".join(flags), needs_shell=needs_shell, framework="vllm")


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def is_elastic_ep_ray_launch(container: dict[str, Any]) -> bool:
    """``--enable-elastic-ep`` with the Ray data-parallel backend, anywhere on the command line."""
    tokens = expanded([*(container.get("command") or []), *(container.get("args") or [])])
    ray_backend = has_arg(tokens, "--data-parallel-backend", "ray") or has_arg(
        tokens, "-dpb", "ray"
    )
    return has_flag(tokens, ELASTIC_EP) and ray_backend


def elastic_ep_ray(container: dict[str, Any], launch: Launch) -> bool:
    """Front the engine with a Ray head (leader, single pod) or join it (worker).

    Returns False when it left the container alone: a head needs an explicit ``command``, since
    the image entrypoint is unknown here.
    """
    if launch.role == "worker":
        container["args"] = [_join_when_leader_serves(launch)]
    else:
        if not container.get("command"):
            return False
        container["args"] = [_ray_head_then_engine(container, single_pod=launch.role == "main")]
    container["command"] = list(SHELL)
    return True


def _ray_head_then_engine(container: dict[str, Any], *, single_pod: bool) -> str:
    tokens = [*(container.get("command") or []), *(container.get("args") or [])]
    engine = " ".join(quote_posix(t) for t in tokens).strip()
    node_ip = ""
    if single_pod:
        # exec: the engine is PID 1 and gets SIGTERM; the head binds the address vLLM expects.
        engine = "exec " + engine
        node_ip = ' --node-ip-address="$POD_IP"'
    wait_head = (
        "i=0; until python3 -c \"import socket; s=socket.create_connection(('127.0.0.1',"
        f'{RAY_PORT}),timeout=1); s.close()" 2>/dev/null; do i=$((i+1)); '
        '[ "$i" -ge 150 ] && { echo "ERROR: Ray head did not start within 300s" >&2; exit 1; }; '
        "sleep 2; done"
    )
    return f"ray start --head --port={RAY_PORT}{node_ip} --block & {wait_head} && {engine}"


def _join_when_leader_serves(launch: Launch) -> str:
    leader = launch.deployer.leader_hostname(launch.service)
    # Joining only after the leader's /live is 200 keeps the initial DP placement on the leader.
    gate = (
        'i=0; until python3 -c "import urllib.request; urllib.request.urlopen('
        f"'http://{leader}:{SYSTEM_PORT}/live', timeout=5)\" 2>/dev/null; do i=$((i+1)); "
        '[ "$i" -ge 720 ] && { echo "ERROR: leader /live did not become ready within 3h" >&2; '
        "exit 1; }; echo 'waiting for leader dynamo.vllm /live to return 200...'; sleep 15; done"
    )
    return f"{gate} && ray start --address={leader}:{RAY_PORT} --block"


def update_pod_spec(spec: dict[str, Any], main: dict[str, Any], launch: Launch) -> None:
    """An ``mp`` worker waits in an init container until the leader's master port answers."""
    if not (launch.parent and launch.multinode and launch.role == "worker"):
        return
    if not command_line_has_arg(main.get("command") or [], main.get("args") or [], EXECUTOR, "mp"):
        return
    volume = {"name": VOLUME, "configMap": {"name": config_map_name(launch.parent)}}
    spec["volumes"] = [*(spec.get("volumes") or []), volume]
    spec["initContainers"] = [*(spec.get("initContainers") or []), _wait_for_leader(main, launch)]


def _wait_for_leader(main: dict[str, Any], launch: Launch) -> dict[str, Any]:
    # A shell expands the host: LWS/Grove append their env after ours, so $(VAR) would not resolve.
    host = shell_var_syntax(launch.deployer.leader_hostname(launch.service))
    script = f"{SCRIPT_MOUNT}/{SCRIPT_KEY}"
    line = f'export LEADER_HOST="{host}" LEADER_PORT="{MP_MASTER_PORT}" && exec python3 {script}'
    init: dict[str, Any] = {"name": WAIT_FOR_LEADER}
    if main.get("image"):
        init["image"] = main["image"]
    init["command"] = ["sh", "-c", line]
    init["volumeMounts"] = [{"name": VOLUME, "mountPath": SCRIPT_MOUNT, "readOnly": True}]
    return init


def shell_var_syntax(text: str) -> str:
    """``$(VAR)`` -> ``${VAR}``; other text unchanged."""
    return re.sub(r"\$\(([0-9A-Za-z_]+)\)", r"${\1}", text)


def _mp(launch: Launch) -> bool:
    return uses_mp(
        launch.annotations,
        graph_owned=launch.graph_owned,
        upstream_served=launch.upstream_served,
    )
