"""Reading a configuration file: strict decoding, upstream's validation, unused fields named."""

from __future__ import annotations

import pytest

from syncagent.api.operatorconfig import OperatorConfigError, load_operator_config

VALID = """\
apiVersion: operator.config.dynamo.nvidia.com/v1alpha1
kind: OperatorConfiguration
mpi: {sshSecretName: mpi-ssh, sshSecretNamespace: dynamo-system}
rbac:
  plannerClusterRoleName: planner
  dgdrProfilingClusterRoleName: profiling
  eppClusterRoleName: epp
"""


def test_a_valid_file_is_defaulted_and_names_what_syncagent_does_not_use() -> None:
    loaded = load_operator_config(
        VALID + "discovery: {backend: etcd}\ngpu: {discoveryEnabled: false}\n"
        "server: {metrics: {port: 9000, tls: x}}\nextra: 1\n",
        source="cfg.yaml",
    )
    assert loaded.config.discovery.backend == "etcd"
    assert loaded.config.server.metrics.bind_address == "0.0.0.0"
    assert loaded.unknown == ["extra", "server.metrics.tls"]
    assert "discovery.backend" not in loaded.ignored
    assert {"gpu.discoveryEnabled", "server.metrics.port", "mpi.sshSecretName"} <= set(
        loaded.ignored
    )
    unknown, ignored = loaded.notices()
    assert unknown.startswith("cfg.yaml: unknown fields extra, server.metrics.tls")
    assert ignored.startswith("cfg.yaml: syncagent does not use ")
    assert "gpu.discoveryEnabled" in ignored


def test_apiversion_and_kind_may_be_left_out_and_nulls_are_zero() -> None:
    body = "\n".join(VALID.splitlines()[2:]) + "\ninfrastructure: {natsAddress: null}\n"
    loaded = load_operator_config(body, source="c")
    assert loaded.config.infrastructure.nats_address == ""
    assert loaded.notices()[-1].startswith("c: syncagent does not use mpi.sshSecretName")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("server: {metrics: {port: '8080'}}\n", "cfg.yaml: server.metrics.port: "),
        ("namespace: {restricted: 5}\n", "cfg.yaml: namespace.restricted: "),
        (
            "orchestrators: {grove: {terminationDelay: 90}}\n",
            "orchestrators.grove.terminationDelay",
        ),
        ("discovery: {backend: consul}\n", "cfg.yaml: discovery.backend: unsupported value"),
        ("kind: Config\n", "cfg.yaml: kind: 'Config' is not 'OperatorConfiguration'"),
    ],
)
def test_what_upstream_refuses_names_the_file_and_field(extra: str, message: str) -> None:
    with pytest.raises(OperatorConfigError) as caught:
        load_operator_config(VALID + extra, source="cfg.yaml")
    assert message in str(caught.value)
    assert str(caught.value).startswith("cfg.yaml: ")


def test_without_mpi_and_roles_a_file_is_refused_as_upstream_refuses_it() -> None:
    with pytest.raises(OperatorConfigError, match=r"^f: mpi.sshSecretName: required"):
        load_operator_config("{}", source="f")
    with pytest.raises(OperatorConfigError, match="f: expected a mapping"):
        load_operator_config("- 1\n", source="f")


def test_the_infrastructure_addresses_are_used_not_named() -> None:
    body = (
        VALID + "infrastructure: {natsAddress: 'nats://n:4222', prometheusEndpoint: 'http://p'}\n"
    )
    loaded = load_operator_config(body, source="c")
    assert not [p for p in loaded.ignored if p.startswith("infrastructure.")]
    assert loaded.config.infrastructure.nats_address == "nats://n:4222"
