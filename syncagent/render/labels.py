"""Label and annotation keys the renderer reads or writes (one place, no string typos)."""

from __future__ import annotations

from typing import Final

P: Final = "nvidia.com/"

# identity labels
COMPONENT: Final = P + "dynamo-component"
COMPONENT_TYPE: Final = P + "dynamo-component-type"
SUB_COMPONENT_TYPE: Final = P + "dynamo-sub-component-type"
DYNAMO_NAMESPACE: Final = P + "dynamo-namespace"
GRAPH_NAME: Final = P + "dynamo-graph-deployment-name"
BASE_MODEL_HASH: Final = P + "dynamo-base-model-hash"
METRICS_ENABLED: Final = P + "metrics-enabled"
DISCOVERY_BACKEND: Final = P + "dynamo-discovery-backend"
DISCOVERY_ENABLED: Final = P + "dynamo-discovery-enabled"
SELECTOR: Final = P + "selector"
ROLE: Final = "role"
MANAGED_BY: Final = P + "managed-by"
MANAGED_BY_OPERATOR: Final = "dynamo-operator"

# annotations
BASE_MODEL: Final = P + "dynamo-base-model"
ENABLE_METRICS: Final = P + "enable-metrics"
KUBE_DISCOVERY_MODE: Final = P + "dynamo-kube-discovery-mode"
VLLM_EXECUTOR_BACKEND: Final = P + "vllm-distributed-executor-backend"
RESTART_AT: Final = P + "restartAt"
ORIGIN_VERSION: Final = P + "dynamo-operator-origin-version"
WORKER_HASH: Final = P + "dynamo-worker-hash"
DISABLE_PULL_SECRET_DISCOVERY: Final = P + "disable-image-pull-secret-discovery"
CHECKPOINT_CANDIDATE: Final = P + "dynamo-checkpoint-restore-candidate"
CHECKPOINT_NAME: Final = P + "dynamo-checkpoint-name"
ISTIO_INJECT: Final = "sidecar.istio.io/inject"
MAX_SURGE: Final = P + "deployment-rolling-update-max-surge"
MAX_UNAVAILABLE: Final = P + "deployment-rolling-update-max-unavailable"
STRATEGY: Final = P + "deployment-strategy"
ENABLE_GROVE: Final = P + "enable-grove"
ENABLE_DISAGGREGATED_SET: Final = P + "enable-disaggregatedset"
# kubectl's copy of the whole manifest must not leak into every pod (our design).
KUBECTL_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"

# DGD metadata annotations copied into each component's pod template (docs/rendering.md §1 step 3)
COPIED_GRAPH_ANNOTATIONS: Final = (
    ENABLE_METRICS,
    DISCOVERY_BACKEND,
    KUBE_DISCOVERY_MODE,
    VLLM_EXECUTOR_BACKEND,
)

# RBAC identity labels
APP_MANAGED_BY: Final = "app.kubernetes.io/managed-by"
APP_COMPONENT: Final = "app.kubernetes.io/component"
APP_NAME: Final = "app.kubernetes.io/name"
