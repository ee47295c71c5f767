"""Upstream's defaulting: expected values written from upstream's Go source
(deploy/operator/api/config/v1alpha1/defaults.go at 2a6da14c8, SetDefaultsOperatorConfiguration)."""

from __future__ import annotations

from syncagent.api.operatorconfig import OperatorConfiguration, default_config
from syncagent.api.operatorconfig.configdefaults import defaulted


def test_an_empty_configuration_takes_upstreams_defaults() -> None:
    cfg = default_config().config
    server = cfg.server
    # defaults.go:33-62 (server)
    assert (server.metrics.bind_address, server.metrics.port, server.metrics.secure) == (
        "0.0.0.0",
        8080,
        True,
    )
    assert (server.health_probe.bind_address, server.health_probe.port) == ("0.0.0.0", 8081)
    assert (server.webhook.host, server.webhook.port) == ("0.0.0.0", 9443)
    assert server.webhook.cert_dir == "/tmp/k8s-webhook-server/serving-certs"
    assert server.webhook.cert_provision_mode == "auto"
    assert server.webhook.secret_name == "webhook-server-cert"
    # defaults.go:65-67: 15 * time.Minute
    assert cfg.orchestrators.grove.termination_delay == 900.0
    # defaults.go:70-75: 30s and 10s
    assert (cfg.namespace.scope.lease_duration, cfg.namespace.scope.lease_renew_interval) == (
        30.0,
        10.0,
    )
    assert cfg.discovery.backend == "kubernetes"  # defaults.go:78-80
    assert cfg.gpu.discovery_enabled is True  # defaults.go:83-85
    assert (cfg.logging.level, cfg.logging.format) == ("info", "json")  # defaults.go:99-104
    assert cfg.service_mesh.istio is None  # defaults.go:88: only for provider istio
    assert cfg.infrastructure.nats_address == ""  # no default: no NATS_SERVER is added


def test_values_the_file_sets_are_kept() -> None:
    cfg = defaulted(
        OperatorConfiguration.model_validate(
            {
                "server": {"metrics": {"port": 9090, "secure": False}},
                "discovery": {"backend": "etcd"},
                "gpu": {"discoveryEnabled": False},
                "orchestrators": {"grove": {"terminationDelay": "1m"}},
            }
        )
    )
    assert (cfg.server.metrics.port, cfg.server.metrics.secure) == (9090, False)
    assert cfg.server.metrics.bind_address == "0.0.0.0"
    assert cfg.discovery.backend == "etcd"
    assert cfg.gpu.discovery_enabled is False
    assert cfg.orchestrators.grove.termination_delay == 60.0


def test_istio_provider_gets_simple_tls_and_skips_verification() -> None:
    # defaults.go:88-97: provider istio without an istio block gets one, TLSMode SIMPLE,
    # InsecureSkipVerify true.
    cfg = defaulted(OperatorConfiguration.model_validate({"serviceMesh": {"provider": "istio"}}))
    assert cfg.service_mesh.istio is not None
    assert cfg.service_mesh.istio.tls_mode == "SIMPLE"
    assert cfg.service_mesh.istio.insecure_skip_verify is True
    mutual = defaulted(
        OperatorConfiguration.model_validate(
            {"serviceMesh": {"istio": {"tlsMode": "MUTUAL", "insecureSkipVerify": False}}}
        )
    )
    assert mutual.service_mesh.istio is not None
    assert (mutual.service_mesh.istio.tls_mode, mutual.service_mesh.istio.insecure_skip_verify) == (
        "MUTUAL",
        False,
    )


def test_defaulting_leaves_its_input_alone() -> None:
    given = OperatorConfiguration()
    defaulted(given)
    assert given.server.metrics.port == 0
