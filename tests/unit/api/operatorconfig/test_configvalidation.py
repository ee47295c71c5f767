"""Upstream's validation: each case and its error count from upstream's Go tests
(deploy/operator/api/config/validation/validation_test.go at 2a6da14c8)."""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.api.operatorconfig import OperatorConfiguration
from syncagent.api.operatorconfig.configdefaults import defaulted
from syncagent.api.operatorconfig.configvalidation import validate_operator_config


def valid(**changes: Any) -> dict[str, Any]:
    """validation_test.go:31-39 validConfig: defaults, MPI Secret, the three ClusterRoles."""
    body: dict[str, Any] = {
        "mpi": {"sshSecretName": "mpi-ssh", "sshSecretNamespace": "default"},
        "rbac": {
            "plannerClusterRoleName": "planner-role",
            "dgdrProfilingClusterRoleName": "dgdr-profiling-role",
            "eppClusterRoleName": "epp-role",
        },
    }
    for section, value in changes.items():
        body[section] = {**body.get(section, {}), **value}
    return body


def problems(body: dict[str, Any], *, default: bool = True) -> list[str]:
    # Undefaulted, as a Go test builds it: the one field defaulting must set is given.
    cfg = OperatorConfiguration.model_validate({"discovery": {"backend": "kubernetes"}, **body})
    return [p.path for p in validate_operator_config(defaulted(cfg) if default else cfg)]


RESTRICTED = {"restricted": "my-namespace"}
NO_ROLES = {
    "plannerClusterRoleName": "",
    "dgdrProfilingClusterRoleName": "",
    "eppClusterRoleName": "",
}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (valid(), []),  # :53 Valid
        (valid(namespace=RESTRICTED, rbac=NO_ROLES), []),  # :60 ValidNamespaceScoped
        (
            valid(mpi={"sshSecretName": "", "sshSecretNamespace": ""}),
            ["mpi.sshSecretName", "mpi.sshSecretNamespace"],
        ),  # :67 MissingMPISecret: 2 errors
        (valid(discovery={"backend": "consul"}), ["discovery.backend"]),  # :78
        (valid(rbac={"plannerClusterRoleName": ""}), ["rbac.plannerClusterRoleName"]),  # :88
        (valid(checkpoint={"enabled": True}), []),  # :129 needs no storage configuration
        (
            valid(checkpoint={"enabled": True, "storage": {"type": "s3", "s3": {"uri": "s3://b"}}}),
            [],
        ),  # :139 deprecated storage accepted
        (
            valid(infrastructure={"modelExpressURL": "://bad-url"}),
            ["infrastructure.modelExpressURL"],
        ),
        (valid(server={"metrics": {"port": 99999}}), ["server.metrics.port"]),  # :182
        (valid(leaderElection={"enabled": True, "id": ""}), ["leaderElection.id"]),  # :192
        (
            valid(orchestrators={"grove": {"terminationDelay": "-1s"}}),
            ["orchestrators.grove.terminationDelay"],
        ),  # :203
    ],
)
def test_upstreams_cases(body: dict[str, Any], expected: list[str]) -> None:
    assert problems(body) == expected


def test_restricted_mode_checks_the_scope_lease() -> None:
    # :107 zero lease values (set after defaulting, as the Go test does): 2 errors
    zero = {"restricted": "ns", "scope": {"leaseDuration": "0s", "leaseRenewInterval": "0s"}}
    assert problems(valid(namespace=zero), default=False) == [
        "namespace.scope.leaseDuration",
        "namespace.scope.leaseRenewInterval",
    ]
    # :118 renew interval 15s over a 10s lease: 1 error
    longer = {"restricted": "ns", "scope": {"leaseDuration": "10s", "leaseRenewInterval": "15s"}}
    assert problems(valid(namespace=longer)) == ["namespace.scope.leaseRenewInterval"]


def test_mutual_tls_needs_a_client_certificate_and_key() -> None:
    # validation.go validateServiceMesh
    mutual = {"provider": "istio", "istio": {"tlsMode": "MUTUAL"}}
    assert problems(valid(serviceMesh=mutual)) == [
        "serviceMesh.istio.clientCertificate",
        "serviceMesh.istio.privateKey",
    ]
    odd = {"provider": "istio", "istio": {"tlsMode": "STRICT"}}
    assert problems(valid(serviceMesh=odd)) == ["serviceMesh.istio.tlsMode"]
    off = {"provider": "istio", "enabled": False, "istio": {"tlsMode": "STRICT"}}
    assert problems(valid(serviceMesh=off)) == []
    # validation must not depend on defaulting: provider istio without its block
    assert problems(valid(serviceMesh={"provider": "istio"}), default=False) == [
        "serviceMesh.istio"
    ]
