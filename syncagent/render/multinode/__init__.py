"""Multinode launch: the flags, probes, environment, volumes and init containers each backend
(SGLang, vLLM, TensorRT-LLM) needs so the pods of one instance form one engine.

Pure and shared by every pathway: :func:`syncagent.render.pod_template` calls
:func:`backend_of` / :func:`launch_of` for every role, so LeaderWorkerSets of DCDs,
DisaggregatedSet roles and Grove cliques get the same rewrite; only the
:class:`~syncagent.render.multinode.deployer.Deployer` (leader address, node rank) differs.
The facts come from upstream's operator (ai-dynamo/dynamo ``2a6da14c8``,
``deploy/operator/internal/dynamo/backend_*.go``); docs/multinode.md lists where we differ.
"""

from syncagent.render.multinode.backend import Backend, backend_for, backend_name
from syncagent.render.multinode.component import backend_of, launch_of
from syncagent.render.multinode.deployer import Deployer, GroveDeployer, LwsDeployer
from syncagent.render.multinode.launch import Launch, Role
from syncagent.render.multinode.waitleader import (
    config_map_name,
    mounts_wait_leader,
    wait_leader_config_map,
)

__all__ = [
    "Backend",
    "Deployer",
    "GroveDeployer",
    "Launch",
    "LwsDeployer",
    "Role",
    "backend_for",
    "backend_name",
    "backend_of",
    "config_map_name",
    "launch_of",
    "mounts_wait_leader",
    "wait_leader_config_map",
]
