"""SGLang on several nodes: ``--dist-init-addr <leader>:29500 --nnodes N --node-rank R``.

Workers lose every probe (the defaults and the user's): only the leader serves.
"""

from __future__ import annotations

from typing import Any

from syncagent.render.multinode.inject import inject_flags
from syncagent.render.multinode.launch import Launch, drop_probes

DIST_INIT_PORT = "29500"


def multinode_flags(launch: Launch) -> tuple[str, bool]:
    """``(flags, needs_shell)`` of this role; the leader is rank 0 and never needs a shell."""
    leader = launch.deployer.leader_hostname(launch.service)
    rank, needs_shell = ("0", False) if launch.role == "leader" else launch.deployer.node_rank()
    flags = f"--dist-init-addr {leader}:{DIST_INIT_PORT} --nnodes {launch.nodes} --node-rank {rank}"
    return flags, needs_shell


def update_container(container: dict[str, Any], launch: Launch) -> None:
    if not launch.multinode:
        return
    if launch.role == "worker":
        drop_probes(container)
    flags, needs_shell = multinode_flags(launch)
    inject_flags(container, flags, needs_shell=needs_shell, framework="sglang")


def update_pod_spec(spec: dict[str, Any], main: dict[str, Any], launch: Launch) -> None:
    """SGLang needs nothing at pod level."""
