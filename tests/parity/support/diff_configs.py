"""The operator configurations the differential tier runs under (no tests here): upstream's
defaults, and a production-shaped one as the Dynamo platform chart writes it. Each is given to
both sides as it is: the harness decodes it into upstream's Go type, ``syncagent render`` reads
it with ``--operator-config``."""

from __future__ import annotations

from typing import Any

DEFAULT = ""  # no file: upstream's defaults on both sides
PRODUCTION = "production"

CONFIGS: dict[str, dict[str, Any]] = {
    PRODUCTION: {
        "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
        "kind": "OperatorConfiguration",
        "infrastructure": {
            "natsAddress": "nats://dynamo-platform-nats.dynamo-system:4222",
            "etcdAddress": "dynamo-platform-etcd.dynamo-system:2379",
            "modelExpressURL": "http://model-express.dynamo-system:8080",
            "prometheusEndpoint": "http://prometheus-kube-prometheus-prometheus.monitoring:9090",
        },
        "discovery": {"backend": "etcd"},
        "mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"},
        "rbac": {
            "plannerClusterRoleName": "dynamo-platform-planner",
            "dgdrProfilingClusterRoleName": "dynamo-platform-dgdr-profiling",
            "eppClusterRoleName": "dynamo-platform-epp",
        },
    },
}


def operator_config(name: str) -> dict[str, Any] | None:
    """The configuration called ``name`` (None: upstream's defaults, no file)."""
    return CONFIGS[name] if name else None
