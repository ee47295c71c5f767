"""Upstream's ``SetDefaultsOperatorConfiguration`` (api/config/v1alpha1/defaults.go), in its
order: a zero value (or an unset pointer) takes the default, anything the file set stays."""

from __future__ import annotations

from syncagent.api.operatorconfig.configtypes import IstioMeshConfiguration, OperatorConfiguration

DEFAULT_BIND_ADDRESS = "0.0.0.0"


def defaulted(config: OperatorConfiguration) -> OperatorConfiguration:
    """A copy of ``config`` with upstream's defaults filled in."""
    cfg = config.model_copy(deep=True)
    _server(cfg)
    if cfg.orchestrators.grove.termination_delay == 0:
        cfg.orchestrators.grove.termination_delay = 15 * 60.0
    scope = cfg.namespace.scope
    if scope.lease_duration == 0:
        scope.lease_duration = 30.0
    if scope.lease_renew_interval == 0:
        scope.lease_renew_interval = 10.0
    if not cfg.discovery.backend:
        cfg.discovery.backend = "kubernetes"
    if cfg.gpu.discovery_enabled is None:
        cfg.gpu.discovery_enabled = True
    _service_mesh(cfg)
    cfg.logging.level = cfg.logging.level or "info"
    cfg.logging.format = cfg.logging.format or "json"
    return cfg


def _server(cfg: OperatorConfiguration) -> None:
    metrics, probe, webhook = cfg.server.metrics, cfg.server.health_probe, cfg.server.webhook
    metrics.port = metrics.port or 8080
    metrics.bind_address = metrics.bind_address or DEFAULT_BIND_ADDRESS
    if metrics.secure is None:
        metrics.secure = True
    probe.port = probe.port or 8081
    probe.bind_address = probe.bind_address or DEFAULT_BIND_ADDRESS
    webhook.host = webhook.host or DEFAULT_BIND_ADDRESS
    webhook.port = webhook.port or 9443
    webhook.cert_dir = webhook.cert_dir or "/tmp/k8s-webhook-server/serving-certs"
    webhook.cert_provision_mode = webhook.cert_provision_mode or "auto"
    webhook.secret_name = webhook.secret_name or "webhook-server-cert"


def _service_mesh(cfg: OperatorConfiguration) -> None:
    mesh = cfg.service_mesh
    if mesh.provider == "istio" and mesh.istio is None:
        mesh.istio = IstioMeshConfiguration()
    if mesh.istio is not None:
        mesh.istio.tls_mode = mesh.istio.tls_mode or "SIMPLE"
        if mesh.istio.insecure_skip_verify is None:
            mesh.istio.insecure_skip_verify = True
