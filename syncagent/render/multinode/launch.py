"""The inputs every backend's launch rewrite reads, and the helpers they share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from syncagent.render.multinode.deployer import Deployer

Role = Literal["main", "leader", "worker"]
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
DEFAULT_SSH_SECRET = "mpi-run-ssh-secret"


def _no_gpus() -> int:
    return 0


@dataclass(frozen=True, slots=True)
class Launch:
    """One pod role of one component, as the backends see it.

    ``service`` is the component name (Grove host names use it); ``parent`` the graph (or
    standalone DCD) that owns the wait-for-leader ConfigMap; ``annotations`` the pod template
    annotations, with the graph's operator origin version when it has one; ``graph_owned``
    False for a standalone DCD (its missing origin version means old, as upstream);
    ``upstream_served`` True when the component carries the worker hash upstream's operator
    recorded (a missing origin version means old there too); ``gpus``
    resolves the ``main`` container's GPU count only when a backend asks (it may raise
    ``RenderError``).
    """

    nodes: int
    role: Role
    deployer: Deployer
    service: str = ""
    parent: str = ""
    annotations: Mapping[str, str] = field(default_factory=dict)
    graph_owned: bool = True
    upstream_served: bool = False
    gpus: Callable[[], int] = _no_gpus
    ssh_secret: str = DEFAULT_SSH_SECRET

    @property
    def multinode(self) -> bool:
        return self.nodes > 1


def drop_probes(container: dict[str, Any], *names: str) -> None:
    for name in names or PROBES:
        container.pop(name, None)


def add_env(container: dict[str, Any], entry: dict[str, Any]) -> None:
    """Append ``entry`` unless the container already sets that name (user values win)."""
    env = list(container.get("env") or [])
    if all(e.get("name") != entry["name"] for e in env):
        env.append(entry)
    container["env"] = env


def pod_ip_env(name: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
