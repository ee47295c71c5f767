"""Which configuration fields syncagent reads (docs/operatorconfig.md lists them with what
each does; every other field a file sets is named at start-up as unused)."""

from __future__ import annotations

# Dotted wire paths; a prefix covers its sub-fields.
USED: dict[str, str] = {
    "discovery.backend": "default discovery backend (--discovery-backend overrides it)",
    "infrastructure.natsAddress": "NATS_SERVER in every main container",
    "infrastructure.etcdAddress": "ETCD_ENDPOINTS in every main container",
    "infrastructure.modelExpressURL": "MODEL_EXPRESS_URL in every main container",
    "infrastructure.prometheusEndpoint": "PROMETHEUS_ENDPOINT in every main container",
}


def is_used(path: str) -> bool:
    return any(path == used or path.startswith(f"{used}.") for used in USED)
