"""Inputs shared by the multinode launch tables (no tests here).

The tables are upstream's (ai-dynamo/dynamo 2a6da14c8, deploy/operator/internal/dynamo/
backend_{sglang,vllm,trtllm}_test.go and friends), copied row by row with their names as test
ids. Upstream's two mock deployers are table inputs, reproduced here with the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from syncagent.render.multinode.launch import Launch

ORIGIN = "nvidia.com/dynamo-operator-origin-version"
EXECUTOR = "nvidia.com/vllm-distributed-executor-backend"
# Rows without annotations are upstream's pre-1.0 graphs (their webhook stamps every new one).
LEGACY = {ORIGIN: "0.9.0"}
GROVE_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE)"


@dataclass(frozen=True)
class SimpleDeployer:
    """Upstream's MockSimpleDeployer: a plain rank, no shell needed."""

    def leader_hostname(self, service: str) -> str:
        return "leader.example.com"

    def node_rank(self) -> tuple[str, bool]:
        return "1", False

    def needs_dns_wait(self) -> bool:
        return False

    def host_names(self, service: str, nodes: int) -> list[str]:
        return ["leader.example.com", *(f"worker{i}.example.com" for i in range(1, nodes))]


@dataclass(frozen=True)
class ShellDeployer:
    """Upstream's MockShellDeployer: a rank that needs a shell."""

    def leader_hostname(self, service: str) -> str:
        return "$(LEADER_HOST)"

    def node_rank(self) -> tuple[str, bool]:
        return "$(WORKER_INDEX)", True

    def needs_dns_wait(self) -> bool:
        return True

    def host_names(self, service: str, nodes: int) -> list[str]:
        return ["$(LEADER_HOST)", *(f"$(WORKER_{i}_HOST)" for i in range(1, nodes))]


def launch(
    nodes: int,
    role: str,
    deployer: Any,
    *,
    gpus: int = 0,
    annotations: dict[str, str] | None = None,
    service: str = "test-service",
    parent: str = "",
) -> Launch:
    return Launch(
        nodes=nodes,
        role=role,  # type: ignore[arg-type]
        deployer=deployer,
        service=service,
        parent=parent,
        annotations=dict(annotations or {}),
        gpus=lambda: gpus,
    )


def container(
    command: list[str] | None = None, args: list[str] | None = None, **extra: Any
) -> dict:
    out: dict[str, Any] = {}
    if command is not None:
        out["command"] = list(command)
    if args is not None:
        out["args"] = list(args)
    return {**out, **extra}


def probes() -> dict[str, dict]:
    return {
        "livenessProbe": {"initialDelaySeconds": 30},
        "readinessProbe": {"initialDelaySeconds": 10},
        "startupProbe": {"initialDelaySeconds": 5},
    }


def env_named(c: dict, name: str) -> dict | None:
    return next((e for e in c.get("env") or [] if e["name"] == name), None)
