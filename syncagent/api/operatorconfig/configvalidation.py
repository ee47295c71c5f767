"""Upstream's ``ValidateOperatorConfiguration`` (api/config/validation/validation.go): the
same rules, the same field paths, each problem saying what to set instead."""

from __future__ import annotations

from dataclasses import dataclass

from syncagent.api.operatorconfig.configtypes import (
    NamespaceConfiguration,
    OperatorConfiguration,
    ServiceMeshConfiguration,
)
from syncagent.api.operatorconfig.gourl import url_problem

TLS_MODES = ("DISABLE", "SIMPLE", "ISTIO_MUTUAL", "MUTUAL")


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def validate_operator_config(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    """Every problem upstream's validation finds, in upstream's order."""
    return [
        *_server(cfg),
        *_leader_election(cfg),
        *_namespace(cfg.namespace),
        *_mpi(cfg),
        *_infrastructure(cfg),
        *_discovery(cfg),
        *_rbac(cfg),
        *_orchestrators(cfg),
        *_service_mesh(cfg.service_mesh),
    ]


def _server(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    ports = {
        "server.metrics.port": cfg.server.metrics.port,
        "server.healthProbe.port": cfg.server.health_probe.port,
        "server.webhook.port": cfg.server.webhook.port,
    }
    return [
        ConfigProblem(path, f"{port} is not a port: set one between 0 and 65535")
        for path, port in ports.items()
        if not 0 <= port <= 65535
    ]


def _leader_election(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    if cfg.leader_election.enabled and not cfg.leader_election.id:
        return [ConfigProblem("leaderElection.id", "required when leader election is enabled")]
    return []


def _namespace(ns: NamespaceConfiguration) -> list[ConfigProblem]:
    if not ns.restricted:
        return []
    scope, path = ns.scope, "namespace.scope"
    found = []
    if scope.lease_duration <= 0:
        found.append(
            ConfigProblem(f"{path}.leaseDuration", "must be greater than 0 in restricted mode")
        )
    if scope.lease_renew_interval <= 0:
        found.append(
            ConfigProblem(f"{path}.leaseRenewInterval", "must be greater than 0 in restricted mode")
        )
    elif 0 < scope.lease_duration <= scope.lease_renew_interval:
        found.append(ConfigProblem(f"{path}.leaseRenewInterval", "must be less than leaseDuration"))
    return found


def _mpi(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    found = []
    if not cfg.mpi.ssh_secret_name:
        found.append(ConfigProblem("mpi.sshSecretName", "required: name the MPI SSH Secret"))
    if not cfg.mpi.ssh_secret_namespace:
        found.append(
            ConfigProblem("mpi.sshSecretNamespace", "required: name the MPI SSH Secret's namespace")
        )
    return found


def _infrastructure(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    url = cfg.infrastructure.model_express_url
    problem = url_problem(url) if url else None
    if problem is None:
        return []
    return [
        ConfigProblem("infrastructure.modelExpressURL", f"{url!r} is not a valid URL: {problem}")
    ]


def _discovery(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    if cfg.discovery.backend in ("kubernetes", "etcd"):
        return []
    return [
        ConfigProblem(
            "discovery.backend",
            f"unsupported value {cfg.discovery.backend!r}: use kubernetes or etcd",
        )
    ]


def _rbac(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    # Only cluster-wide mode binds the planner, profiling and EPP roles in graph namespaces.
    if cfg.namespace.restricted:
        return []
    roles = {
        "rbac.plannerClusterRoleName": cfg.rbac.planner_cluster_role_name,
        "rbac.dgdrProfilingClusterRoleName": cfg.rbac.dgdr_profiling_cluster_role_name,
        "rbac.eppClusterRoleName": cfg.rbac.epp_cluster_role_name,
    }
    return [
        ConfigProblem(path, "required in cluster-wide mode (namespace.restricted empty)")
        for path, name in roles.items()
        if not name
    ]


def _orchestrators(cfg: OperatorConfiguration) -> list[ConfigProblem]:
    if cfg.orchestrators.grove.termination_delay < 0:
        return [ConfigProblem("orchestrators.grove.terminationDelay", "must not be negative")]
    return []


def _service_mesh(mesh: ServiceMeshConfiguration) -> list[ConfigProblem]:
    if not mesh.is_enabled():
        return []
    path = "serviceMesh.istio"
    if mesh.istio is None:
        return [ConfigProblem(path, 'required when serviceMesh.provider is "istio"')]
    mode = mesh.istio.tls_mode
    if mode not in ("", *TLS_MODES):
        return [
            ConfigProblem(
                f"{path}.tlsMode", f"unsupported value {mode!r}: use one of {', '.join(TLS_MODES)}"
            )
        ]
    found = []
    if mode == "MUTUAL" and not mesh.istio.client_certificate:
        found.append(
            ConfigProblem(f"{path}.clientCertificate", 'required when tlsMode is "MUTUAL"')
        )
    if mode == "MUTUAL" and not mesh.istio.private_key:
        found.append(ConfigProblem(f"{path}.privateKey", 'required when tlsMode is "MUTUAL"'))
    return found
