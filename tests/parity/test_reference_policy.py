"""Issue 41 item 1: upstream's example graphs and recipes through the chart's graph policy.

Each graph of the reference data is dry-run created under the baseline policy with no
exceptions, then under one granting what the graphs need. What each needs is computed here
from the graph (capabilities beyond baseline, hostPath volumes), apart from the policy's CEL:
a graph is refused at baseline exactly when it needs an exception, the refusal names the
field, and every graph is admitted once its exceptions are granted. The list is printed
(``-s``) and is the table in docs/security.md §5.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube import Client

from syncagent.devcluster import ControlPlane
from tests.cluster.support.graph_policy import policy_release, refusal
from tests.parity.support.reference import graph_files, graph_text, in_namespace, relative_id
from tests.support.kube import Kube

pytestmark = pytest.mark.cluster
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}
PROBE = {
    "containers": [{"name": "main", "image": "x", "ports": [{"containerPort": 1, "hostPort": 1}]}]
}


def _needs(graph: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(capabilities, hostPath paths) the graph's pod templates need beyond baseline."""
    capabilities: set[str] = set()
    paths: set[str] = set()
    for component in (graph.get("spec") or {}).get("components") or []:
        spec = (component.get("podTemplate") or {}).get("spec") or {}
        for key in ("containers", "initContainers", "ephemeralContainers"):
            for container in spec.get(key) or []:
                context = container.get("securityContext") or {}
                capabilities |= set((context.get("capabilities") or {}).get("add") or ())
        paths |= {v["hostPath"]["path"] for v in spec.get("volumes") or [] if "hostPath" in v}
    return capabilities - BASELINE_CAPABILITIES, paths


def _graphs(ns: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in graph_files():
        docs = in_namespace(list(yaml.safe_load_all(graph_text(path))), ns)
        for doc in docs:
            if doc["kind"] == "DynamoGraphDeployment":
                doc["metadata"].pop("resourceVersion", None)
                out.append((relative_id(path), doc))
    return out


def _probe(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "probe", "namespace": ns},
        "spec": {"backendFramework": "vllm", "podTemplate": {"spec": PROBE}},
    }


def _policy(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path, *sets: str
) -> contextlib.AbstractContextManager[str]:
    return policy_release(control_plane, client, kube, tmp_path, *sets, probe=_probe, prefix="rp")


def test_reference_graphs_need_only_the_listed_exceptions(
    control_plane: ControlPlane, client: Client, kube: Kube, tmp_path: Path
) -> None:
    all_capabilities: set[str] = set()
    all_paths: set[str] = set()
    lines = []
    with _policy(control_plane, client, kube, tmp_path) as ns:
        graphs = _graphs(ns)
        assert len(graphs) > 10, "too few reference graphs found"
        for name, graph in graphs:
            capabilities, paths = _needs(graph)
            all_capabilities |= capabilities
            all_paths |= paths
            message = refusal(kube, graph)
            if capabilities or paths:
                assert message is not None, f"{name}: admitted without its exceptions"
                field = "capabilities.add" if capabilities else "hostPath"
                assert field in message, message
                needs = ", ".join(
                    [*sorted(capabilities), *(f"hostPath {p}" for p in sorted(paths))]
                )
                lines.append(f"{name}: {needs}")
            else:
                assert message is None, f"{name}: {message}"
    print(f"\n{len(graphs)} reference graphs; those needing graph-policy exceptions (baseline):")
    print("\n".join(lines) or "none")
    granted = (
        f"graphPolicy.exceptions.capabilities={{{','.join(sorted(all_capabilities))}}}",
        f"graphPolicy.exceptions.hostPathPrefixes={{{','.join(sorted(all_paths))}}}",
    )
    with _policy(control_plane, client, kube, tmp_path, *granted) as ns:
        for name, graph in _graphs(ns):
            assert refusal(kube, graph) is None, name
