"""Installing the chart onto the test server, and acting as its ServiceAccount (no tests here)."""

from __future__ import annotations

import copy
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from lightkube import Client, KubeConfig
from lightkube.generic_resource import create_namespaced_resource

from syncagent.devcluster import ControlPlane
from syncagent.devcluster.build import ensure_helm

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "syncagent"
AGENT_MANAGER = "syncagent/helm-rbac-test"

DGD = create_namespaced_resource(
    "nvidia.com", "v1beta1", "DynamoGraphDeployment", "dynamographdeployments"
)
DCD = create_namespaced_resource(
    "nvidia.com", "v1beta1", "DynamoComponentDeployment", "dynamocomponentdeployments"
)
LWS = create_namespaced_resource(
    "leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets"
)
DS = create_namespaced_resource(
    "disaggregatedset.x-k8s.io", "v1", "DisaggregatedSet", "disaggregatedsets"
)
PCS = create_namespaced_resource("grove.io", "v1alpha1", "PodCliqueSet", "podcliquesets")
PCLQ = create_namespaced_resource("grove.io", "v1alpha1", "PodClique", "podcliques")


class Helm:
    """The pinned helm against the test server, with its own config and cache folders."""

    def __init__(self, control_plane: ControlPlane, home: Path) -> None:
        self._kubeconfig = str(control_plane.kubeconfig)
        self._env = {
            **os.environ,
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }

    def __call__(self, *args: str) -> str:
        result = subprocess.run(
            [str(ensure_helm(log=False)), *args, "--kubeconfig", self._kubeconfig],
            capture_output=True,
            text=True,
            env=self._env,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, f"helm {' '.join(args)}:\n{result.stderr}"
        return result.stdout

    def install(self, release: str, namespace: str, *sets: str, extra: tuple[str, ...] = ()) -> str:
        flags = [arg for s in sets for arg in ("--set", s)]
        return self("install", release, str(CHART), "-n", namespace, *flags, *extra)

    def uninstall(self, release: str, namespace: str) -> str:
        return self("uninstall", release, "-n", namespace)


def ca_file(control_plane: ControlPlane) -> str:
    config = yaml.safe_load(control_plane.kubeconfig.read_text())
    return str(config["clusters"][0]["cluster"]["certificate-authority"])


def token_config_dict(control_plane: ControlPlane, token: str) -> dict[str, Any]:
    """A kubeconfig (as data) that authenticates with ``token`` alone."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "test",
                "cluster": {
                    "server": control_plane.server,
                    "certificate-authority": ca_file(control_plane),
                },
            }
        ],
        "users": [{"name": "agent", "user": {"token": token}}],
        "contexts": [{"name": "agent", "context": {"cluster": "test", "user": "agent"}}],
        "current-context": "agent",
    }


def token_config(control_plane: ControlPlane, token: str) -> KubeConfig:
    return KubeConfig.from_dict(token_config_dict(control_plane, token))


@contextmanager
def token_client(control_plane: ControlPlane, token: str) -> Iterator[Client]:
    client = Client(config=token_config(control_plane, token), field_manager=AGENT_MANAGER)
    try:
        yield client
    finally:
        client.close()


def graph(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "components": [
                {
                    "name": "Frontend",
                    "type": "frontend",
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1"}]}},
                }
            ]
        },
    }


def component(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "backendFramework": "vllm",
            "name": "Frontend",
            "type": "frontend",
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1"}]}},
        },
    }


def controller_ref(owner: dict[str, Any]) -> dict[str, Any]:
    """The full controller reference the agent writes (blockOwnerDeletion included)."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owned(body: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``body`` controlled by ``owner``."""
    body = copy.deepcopy(body)
    body["metadata"]["ownerReferences"] = [controller_ref(owner)]
    return body
