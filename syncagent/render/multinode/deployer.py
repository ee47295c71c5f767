"""How the pods of one multinode instance find their leader and learn their rank.

Every value is in Kubernetes ``$(VAR)`` form, which the kubelet expands in ``command``/``args``
before the container starts, except where a shell is needed (``needs_shell``): Grove's rank is
shell arithmetic, and LWS worker host names are derived with ``sed`` at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

GROVE_LEADER_SUFFIX = "ldr"
GROVE_WORKER_SUFFIX = "wkr"


class Deployer(Protocol):
    """What a backend needs from the orchestrator that runs the group of pods."""

    def leader_hostname(self, service: str) -> str: ...

    def node_rank(self) -> tuple[str, bool]:
        """``(rank of this worker pod, whether evaluating it needs a shell)``."""
        ...

    def needs_dns_wait(self) -> bool: ...

    def host_names(self, service: str, nodes: int) -> list[str]:
        """The leader first, then every worker."""
        ...


@dataclass(frozen=True, slots=True)
class LwsDeployer:
    """A LeaderWorkerSet (a DCD's, or a DisaggregatedSet role's child): LWS injects the env."""

    def leader_hostname(self, service: str) -> str:
        return "$(LWS_LEADER_ADDRESS)"

    def node_rank(self) -> tuple[str, bool]:
        return "$(LWS_WORKER_INDEX)", False

    def needs_dns_wait(self) -> bool:
        # LWS pods start together; a worker's DNS record may not exist yet.
        return True

    def host_names(self, service: str, nodes: int) -> list[str]:
        # LWS names no worker; worker i is the leader's address with "-i" before the first dot.
        workers = [
            f"$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-{i}\\./')" for i in range(1, nodes)
        ]
        return [self.leader_hostname(service), *workers]


@dataclass(frozen=True, slots=True)
class GroveDeployer:
    """A Grove PodCliqueScalingGroup: ``<pcsg>-<index>-<component>-ldr|wkr-<pod>`` behind the
    PodCliqueSet's headless Service; a worker's rank is its pod index in the ``wkr`` clique + 1."""

    def leader_hostname(self, service: str) -> str:
        return self._host(service, GROVE_LEADER_SUFFIX, 0)

    def node_rank(self) -> tuple[str, bool]:
        return "$((GROVE_PCLQ_POD_INDEX + 1))", True

    def needs_dns_wait(self) -> bool:
        return False

    def host_names(self, service: str, nodes: int) -> list[str]:
        workers = [self._host(service, GROVE_WORKER_SUFFIX, i) for i in range(nodes - 1)]
        return [self.leader_hostname(service), *workers]

    @staticmethod
    def _host(service: str, suffix: str, pod: int) -> str:
        return (
            f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{service.lower()}-{suffix}-{pod}"
            ".$(GROVE_HEADLESS_SERVICE)"
        )
