"""Defaults of the ``main`` container (docs/rendering.md §2), applied only where the user left a gap."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.render.workerhash import WORKER_SUFFIX_ENV

MAIN = "main"
FRONTEND_PORT = 8000
SYSTEM_PORT = 9090
NIXL_PORT = 19090
PLANNER_METRICS_PORT = 9085
PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"  # must exist; we do not create it
ETCD = "etcd"
KUBERNETES = "kubernetes"
CONTAINER_MODE = "container"  # nvidia.com/dynamo-kube-discovery-mode


def _http_probe(path: str, port: str, **timing: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": port}, **timing}


FRONTEND_PROBES: dict[str, dict[str, Any]] = {
    "livenessProbe": _http_probe(
        "/live",
        "http",
        initialDelaySeconds=15,
        periodSeconds=10,
        timeoutSeconds=1,
        failureThreshold=3,
    ),
    "readinessProbe": _http_probe(
        "/health",
        "http",
        initialDelaySeconds=10,
        periodSeconds=10,
        timeoutSeconds=3,
        failureThreshold=3,
    ),
}
# Workers and the planner share these (upstream component_worker.go, component_planner.go).
WORKER_PROBES: dict[str, dict[str, Any]] = {
    "livenessProbe": _http_probe(
        "/live", "system", periodSeconds=5, timeoutSeconds=4, failureThreshold=1
    ),
    "readinessProbe": _http_probe(
        "/health", "system", periodSeconds=10, timeoutSeconds=4, failureThreshold=3
    ),
    "startupProbe": _http_probe(
        "/live", "system", periodSeconds=10, timeoutSeconds=5, failureThreshold=720
    ),
}

WORKER_ENV = {
    "DYN_SYSTEM_ENABLED": "true",
    "DYN_SYSTEM_PORT": str(SYSTEM_PORT),
    "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS": '["generate"]',
    "DYN_HEALTH_CHECK_ENABLED": "false",
    "DYN_FORWARDPASS_METRIC_PORT": "20380",
    "NIXL_TELEMETRY_ENABLE": "n",
    "NIXL_TELEMETRY_EXPORTER": "prometheus",
    "NIXL_TELEMETRY_PROMETHEUS_PORT": str(NIXL_PORT),
}


def _port(name: str, number: int) -> dict[str, Any]:
    return {"name": name, "containerPort": number, "protocol": "TCP"}


def _field_env(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


@dataclass(frozen=True, slots=True)
class MainDefaults:
    """Everything the renderer may add to ``main``; each piece only fills a gap."""

    command: tuple[str, ...]
    args: tuple[str, ...] = ()
    env: tuple[dict[str, Any], ...] = ()
    ports: tuple[dict[str, Any], ...] = ()
    probes: tuple[tuple[str, dict[str, Any]], ...] = ()


@dataclass(frozen=True, slots=True)
class DefaultsInput:
    component_type: str
    workload_type: str
    dynamo_namespace: str
    parent: str
    namespace: str
    discovery_backend: str
    kube_discovery_mode: str = "pod"
    # A worker's recorded worker generation (syncagent/render/workerhash.py); "" for none.
    worker_hash_suffix: str = ""


def _common_env(inp: DefaultsInput) -> list[dict[str, Any]]:
    """Every component's env (upstream ``getCommonContainer``). An etcd backend gets no
    ``DYN_DISCOVERY_BACKEND``: the runtime's default is etcd; any other value means Kubernetes."""
    env: list[dict[str, Any]] = [
        {"name": "DYN_NAMESPACE", "value": inp.dynamo_namespace},
        {"name": "DYN_COMPONENT", "value": inp.workload_type},
        {"name": "DYN_PARENT_DGD_K8S_NAME", "value": inp.parent},
        {"name": "DYN_PARENT_DGD_K8S_NAMESPACE", "value": inp.namespace},
        _field_env("POD_NAME", "metadata.name"),
        _field_env("POD_NAMESPACE", "metadata.namespace"),
        _field_env("POD_UID", "metadata.uid"),
    ]
    if inp.discovery_backend != ETCD:
        env.append({"name": "DYN_DISCOVERY_BACKEND", "value": KUBERNETES})
    if inp.kube_discovery_mode == CONTAINER_MODE:
        # each container registers itself with the discovery plane, under its own name
        env.append({"name": "CONTAINER_NAME", "value": MAIN})
        env.append({"name": "DYN_KUBE_DISCOVERY_MODE", "value": CONTAINER_MODE})
    return env


def main_defaults(inp: DefaultsInput) -> MainDefaults:
    env = _common_env(inp)
    if inp.component_type == "frontend":
        env += [
            {"name": "DYNAMO_PORT", "value": str(FRONTEND_PORT)},
            {"name": "DYN_HTTP_PORT", "value": str(FRONTEND_PORT)},
            {"name": "DYN_NAMESPACE_PREFIX", "value": inp.dynamo_namespace},
        ]
        return MainDefaults(
            command=("python3",),
            args=("-m", "dynamo.frontend"),
            env=tuple(env),
            ports=(_port("http", FRONTEND_PORT),),
            probes=tuple(FRONTEND_PROBES.items()),
        )
    if inp.component_type in ("worker", "prefill", "decode"):
        env += [{"name": k, "value": v} for k, v in WORKER_ENV.items()]
        if inp.worker_hash_suffix:
            # The runtime registers in "<DYN_NAMESPACE>-<suffix>", one namespace per worker
            # generation, as upstream's pods of that generation do (component_worker.go).
            env.append({"name": WORKER_SUFFIX_ENV, "value": inp.worker_hash_suffix})
        # Every role gets the probes; a backend's multinode launch then changes the worker's.
        return MainDefaults(
            command=("/bin/sh", "-c"),
            env=tuple(env),
            ports=(_port("system", SYSTEM_PORT), _port("nixl", NIXL_PORT)),
            probes=tuple(WORKER_PROBES.items()),
        )
    if inp.component_type == "planner":
        env += [
            {"name": "PLANNER_PROMETHEUS_PORT", "value": str(PLANNER_METRICS_PORT)},
            {"name": "DYN_SYSTEM_PORT", "value": str(SYSTEM_PORT)},
        ]
        return MainDefaults(
            command=("/bin/sh", "-c"),
            env=tuple(env),
            ports=(_port("metrics", PLANNER_METRICS_PORT), _port("system", SYSTEM_PORT)),
            probes=tuple(WORKER_PROBES.items()),
        )
    return MainDefaults(command=("/bin/sh", "-c"), env=tuple(env))


def merge_env(
    common: Sequence[Mapping[str, Any]], specific: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One variable per name, ``specific`` winning, sorted by name (upstream ``MergeEnvs``).

    The order is upstream's on every merge it makes (graph into component, defaults into
    ``main``), so a pod it started is not rolled by a reordered list; as under upstream, a
    ``$(NAME)`` reference resolves only to a variable that sorts before it.
    """
    merged = {e["name"]: e for e in common}
    merged.update({e["name"]: e for e in specific})
    return [copy.deepcopy(dict(merged[name])) for name in sorted(merged)]


def apply_main_defaults(container: dict[str, Any], defaults: MainDefaults) -> dict[str, Any]:
    """``container`` with every default whose field or entry the user left unset (a user list of
    ports counts as set: it replaces the default ports)."""
    out = dict(container)
    if not out.get("command"):
        out["command"] = list(defaults.command)
    if not out.get("args") and defaults.args:
        out["args"] = list(defaults.args)
    env = merge_env(defaults.env, out.get("env") or [])
    if env:
        out["env"] = env
    # A user's port list replaces the defaults whole, as upstream's merge of the main container
    # replaces any non-empty list (mergeContainerByName, mergo WithOverride): appending ours
    # would roll every such pod that upstream's operator started.
    if not out.get("ports") and defaults.ports:
        out["ports"] = [dict(p) for p in defaults.ports]
    for field, probe in defaults.probes:
        out.setdefault(field, copy.deepcopy(probe))
    return out


_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def add_probed_ports(container: dict[str, Any], defaults: MainDefaults) -> None:
    """Give back a default port that a probe of the finished container names and the user's own
    port list left out (our design, docs/pod-rules.md): a probe on a port the container lacks
    never succeeds. Upstream leaves it out; a pod whose probes work has the port already, so
    such pods render as upstream's."""
    ports = container.get("ports") or []
    have = {p.get("name") for p in ports}
    named = [_probe_port(container.get(field)) for field in _PROBES]
    missing = [dict(p) for p in defaults.ports if p["name"] in named and p["name"] not in have]
    if ports and missing:
        container["ports"] = [*ports, *missing]


def _probe_port(probe: Any) -> Any:
    if not isinstance(probe, dict):
        return None
    action = probe.get("httpGet") or probe.get("tcpSocket") or {}
    return action.get("port") if isinstance(action, dict) else None
