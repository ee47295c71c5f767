"""Simulated nodes and pod lifecycle with kwok: its stage configuration and the nodes it manages.

kwok plays every kubelet: it marks the nodes it manages Ready and renews their Leases, and moves
each pod scheduled on them through kwok's own stages (Running and Ready with a pod IP, Succeeded
for Job pods, gone once deleted). No container runs. The stages are kwok's shipped defaults,
the ones ``kwokctl`` installs, read from the pinned module download.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from syncagent.devcluster import versions
from syncagent.devcluster.gomod import module_dir

# Simulated GPU nodes of a dev cluster unless told otherwise.
DEFAULT_NODES = 4

NODE_ANNOTATION = "kwok.x-k8s.io/node"
NODE_PREFIX = "kwok-gpu-"
GPU = "nvidia.com/gpu"
LEASE_SECONDS = 40  # kwokctl's default

# kwokctl's defaults (pkg/kwokctl/runtime/cluster.go: getDefaultNodeStages with a lease,
# getDefaultPodStages), as files of the module.
STAGE_FILES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)


def stage_config() -> str:
    """kwok's ``--config`` file: every default stage, one YAML document each."""
    root = module_dir(versions.KWOK_MODULE, versions.KWOK)
    return "\n---\n".join((root / name).read_text().strip() for name in STAGE_FILES) + "\n"


def command(kwok: Path, *, kubeconfig: Path, config: Path) -> list[str]:
    return [
        str(kwok),
        f"--kubeconfig={kubeconfig}",
        f"--config={config}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={NODE_ANNOTATION}=fake",
        f"--node-lease-duration-seconds={LEASE_SECONDS}",
        # Pod IPs; nothing routes to them, EndpointSlices only list them.
        "--cidr=10.244.0.0/16",
        # No --node-port / --server-address: kwok then serves nothing on the network.
    ]


def node(index: int, *, gpus: int = 8) -> dict[str, Any]:
    """A GPU node that kwok manages (no taint: pods need no toleration to land on it)."""
    name = f"{NODE_PREFIX}{index}"
    resources = {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "type": "kwok",
                "nvidia.com/gpu.present": "true",
            },
        },
        "spec": {},
        "status": {
            "allocatable": resources,
            "capacity": resources,
            # Both kinds, or kwok's node-initialize stage rewrites the list from its flags.
            "addresses": [
                {"type": "InternalIP", "address": f"10.240.0.{index + 1}"},
                {"type": "Hostname", "address": name},
            ],
        },
    }


def node_ready(obj: dict[str, Any]) -> bool:
    """Ready, and schedulable: the node lifecycle controller has lifted its not-ready taint."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    taints = (obj.get("spec") or {}).get("taints") or []
    return ready and not any(t.get("effect") in ("NoSchedule", "NoExecute") for t in taints)
