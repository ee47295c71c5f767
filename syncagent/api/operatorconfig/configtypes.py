"""Upstream's ``OperatorConfiguration`` (operator.config.dynamo.nvidia.com/v1alpha1), field for
field as upstream's Go types declare it (deploy/operator/api/config/v1alpha1/types.go at
2a6da14c8), so the file the Dynamo platform chart writes is read as upstream reads it.

Parsing is strict like Go's JSON decoder: a string where Go has an int, or a number where it
has a string, is an error naming the field. A Go pointer (``*bool``) is ``None`` when unset;
every other field starts at Go's zero value, and :mod:`.configdefaults` fills what upstream's
defaulting fills. Durations (``metav1.Duration``) are Go duration strings, held in seconds.
Unknown fields are kept (``extra="allow"``) so they can be named, never silently dropped.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from syncagent.api.operatorconfig.goduration import parse_go_duration

API_VERSION = "operator.config.dynamo.nvidia.com/v1alpha1"
KIND = "OperatorConfiguration"

Seconds = Annotated[float, BeforeValidator(parse_go_duration)]


class Section(BaseModel):
    """One struct of the configuration: camelCase keys, Go-strict values, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", strict=True
    )


class Server(Section):
    bind_address: str = ""
    port: int = 0


class MetricsServer(Server):
    secure: bool | None = None


class WebhookServer(Server):
    host: str = ""
    cert_dir: str = ""
    cert_provision_mode: str = ""
    secret_name: str = ""
    service_name: str = ""


class ServerConfiguration(Section):
    metrics: MetricsServer = Field(default_factory=MetricsServer)
    health_probe: Server = Field(default_factory=Server)
    webhook: WebhookServer = Field(default_factory=WebhookServer)


class LeaderElectionConfiguration(Section):
    enabled: bool = False
    id: str = ""
    namespace: str = ""


class NamespaceScopeConfiguration(Section):
    lease_duration: Seconds = 0.0
    lease_renew_interval: Seconds = 0.0


class NamespaceConfiguration(Section):
    restricted: str = ""
    scope: NamespaceScopeConfiguration = Field(default_factory=NamespaceScopeConfiguration)


class Toggle(Section):
    """An orchestrator or integration switch: ``None`` lets upstream auto-detect it."""

    enabled: bool | None = None


class GroveConfiguration(Toggle):
    termination_delay: Seconds = 0.0


class OrchestratorConfiguration(Section):
    grove: GroveConfiguration = Field(default_factory=GroveConfiguration)
    lws: Toggle = Field(default_factory=Toggle)
    kai_scheduler: Toggle = Field(default_factory=Toggle)
    volcano_scheduler: Toggle = Field(default_factory=Toggle)


class InfrastructureConfiguration(Section):
    nats_address: str = ""
    etcd_address: str = ""
    model_express_url: str = Field(default="", alias="modelExpressURL")
    prometheus_endpoint: str = ""


class IngressConfiguration(Section):
    virtual_service_gateway: str = ""
    controller_class_name: str = ""
    controller_tls_secret_name: str = Field(default="", alias="controllerTLSSecretName")
    host_suffix: str = ""


class IstioMeshConfiguration(Section):
    tls_mode: str = Field(default="", alias="tlsMode")
    insecure_skip_verify: bool | None = None
    client_certificate: str = ""
    private_key: str = ""
    ca_certificates: str = ""


class ServiceMeshConfiguration(Section):
    enabled: bool | None = None
    provider: str = ""
    istio: IstioMeshConfiguration | None = None

    def is_enabled(self) -> bool:
        """Upstream's ``IsEnabled``: Istio resources are generated unless switched off."""
        return self.enabled is not False and self.provider == "istio"


class RBACConfiguration(Section):
    planner_cluster_role_name: str = ""
    dgdr_profiling_cluster_role_name: str = Field(default="", alias="dgdrProfilingClusterRoleName")
    epp_cluster_role_name: str = Field(default="", alias="eppClusterRoleName")


class MPIConfiguration(Section):
    ssh_secret_name: str = Field(default="", alias="sshSecretName")
    ssh_secret_namespace: str = Field(default="", alias="sshSecretNamespace")


class CheckpointSeccompConfiguration(Section):
    disabled: bool = False
    profile: str = ""


class CheckpointPVCConfig(Section):
    pvc_name: str = Field(default="", alias="pvcName")
    base_path: str = ""
    create: bool = False
    size: str = ""
    storage_class_name: str = ""
    access_mode: str = ""


class CheckpointURIConfig(Section):
    """The deprecated S3 and OCI settings upstream keeps for old files and ignores."""

    uri: str = ""
    credentials_secret_ref: str = ""


class CheckpointStorageConfiguration(Section):
    type: str = ""
    pvc: CheckpointPVCConfig = Field(default_factory=CheckpointPVCConfig)
    s3: CheckpointURIConfig = Field(default_factory=CheckpointURIConfig)
    oci: CheckpointURIConfig = Field(default_factory=CheckpointURIConfig)


class CheckpointConfiguration(Section):
    enabled: bool = False
    seccomp: CheckpointSeccompConfiguration | None = None
    storage: CheckpointStorageConfiguration = Field(default_factory=CheckpointStorageConfiguration)
    cleanup_image: str = ""


class DiscoveryConfiguration(Section):
    backend: str = ""


class GPUConfiguration(Section):
    discovery_enabled: bool | None = None


class LoggingConfiguration(Section):
    level: str = ""
    format: str = ""


class SecurityConfiguration(Section):
    enable_http2: bool = Field(default=False, alias="enableHTTP2")


class OperatorConfiguration(Section):
    """The whole file; ``apiVersion`` and ``kind`` may be left out, as upstream's decoder allows."""

    api_version: str = API_VERSION
    kind: str = KIND
    server: ServerConfiguration = Field(default_factory=ServerConfiguration)
    leader_election: LeaderElectionConfiguration = Field(
        default_factory=LeaderElectionConfiguration
    )
    namespace: NamespaceConfiguration = Field(default_factory=NamespaceConfiguration)
    orchestrators: OrchestratorConfiguration = Field(default_factory=OrchestratorConfiguration)
    dra: Toggle = Field(default_factory=Toggle)
    infrastructure: InfrastructureConfiguration = Field(default_factory=InfrastructureConfiguration)
    ingress: IngressConfiguration = Field(default_factory=IngressConfiguration)
    service_mesh: ServiceMeshConfiguration = Field(default_factory=ServiceMeshConfiguration)
    rbac: RBACConfiguration = Field(default_factory=RBACConfiguration)
    mpi: MPIConfiguration = Field(default_factory=MPIConfiguration)
    checkpoint: CheckpointConfiguration = Field(default_factory=CheckpointConfiguration)
    discovery: DiscoveryConfiguration = Field(default_factory=DiscoveryConfiguration)
    gpu: GPUConfiguration = Field(default_factory=GPUConfiguration)
    logging: LoggingConfiguration = Field(default_factory=LoggingConfiguration)
    security: SecurityConfiguration = Field(default_factory=SecurityConfiguration)


def unknown_fields(section: BaseModel, *, prefix: str = "") -> list[str]:
    """The dotted paths of every key upstream's types do not declare (upstream drops them)."""
    found = [f"{prefix}{key}" for key in sorted(section.model_extra or {})]
    for name, info in type(section).model_fields.items():
        value: Any = getattr(section, name)
        if isinstance(value, BaseModel):
            found += unknown_fields(value, prefix=f"{prefix}{info.alias or name}.")
    return found
