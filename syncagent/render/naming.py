"""Names of everything the renderer generates, and the DNS-label truncation rule.

The truncation rule is ``docs/disaggregatedset.md`` §2; names never depend on replicas or status, so
they are stable across reconciles.
"""

from __future__ import annotations

import hashlib

DNS_LABEL_MAX = 63
# The worker StatefulSet's revision label must fit 63 characters (docs/disaggregatedset.md §2).
LWS_NAME_MAX = 41
GLOBAL_DYNAMO_NAMESPACE = "dynamo"
MODEL_SERVICE_PREFIX = "dynamo-model-"
DISCOVERY_SUFFIX = "-k8s-service-discovery"


def normalize(value: str) -> str:
    """Lowercase with ``.`` replaced by ``-``: turns a DNS subdomain into label material."""
    return value.lower().replace(".", "-")


def hash8(value: str) -> str:
    """First 8 hex characters of sha256 over the UTF-8 bytes of ``value``."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]


def trunc(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit].rstrip("-")


def trunc_with_hash(value: str, limit: int) -> str:
    """Keep ``value`` when it fits, else a prefix plus ``-<hash8(value)>`` of exactly ``limit``."""
    if len(value) <= limit:
        return value
    if limit <= 8:
        return hash8(value)[:limit]
    prefix = value[: limit - 9].rstrip("-")
    # An empty prefix would leave a leading "-" (only possible for limit 9).
    return f"{prefix}-{hash8(value)}" if prefix else hash8(value)


def label_value_with_hash(value: str) -> str:
    """``value`` when it is a valid label value's length, else its first 54 characters,
    ``-`` and ``hash8(value)``, as upstream's discovery objects are labelled
    (``getK8sDiscoveryLabelValue``): a cut ending in ``-`` keeps it."""
    if len(value) <= DNS_LABEL_MAX:
        return value
    return f"{value[: DNS_LABEL_MAX - 9]}-{hash8(value)}"


def dcd_name(graph: str, component: str, *, suffix: str = "") -> str:
    """``<dgd>-<lower(component)>``, then ``-<suffix>`` when one is given (upstream
    ``GetDCDResourceName``: the caller passes a worker component's active worker hash, see
    :mod:`syncagent.render.workerhash`): the DCD, Deployment and (normalised) Service name."""
    base = f"{graph}-{component.lower()}"
    return f"{base}-{suffix}" if suffix else base


def lws_name(dcd: str) -> str:
    """The LeaderWorkerSet keeps the legacy ``-0`` suffix, which also keeps it off the Service."""
    return f"{dcd}-0"


def component_service_name(dcd: str) -> str:
    return normalize(dcd)


def dynamo_namespace(namespace: str, parent: str, *, global_namespace: bool = False) -> str:
    """The Dynamo namespace of a component (docs/api.md §1)."""
    if global_namespace:
        return GLOBAL_DYNAMO_NAMESPACE
    return f"{namespace}-{parent.replace('.', '-')}"


def model_hash(model: str) -> str:
    return hash8(model)


def model_service_name(model: str) -> str:
    """Namespace-wide: every graph serving ``model`` shares this Service."""
    return MODEL_SERVICE_PREFIX + hash8(model)


def discovery_service_account(parent: str) -> str:
    return parent + DISCOVERY_SUFFIX


def discovery_role(parent: str) -> str:
    return discovery_service_account(parent) + "-role"


def discovery_role_binding(parent: str) -> str:
    return discovery_service_account(parent) + "-binding"
