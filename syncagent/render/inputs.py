"""What the renderer reads besides the graph: namespace facts and the component to render."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from syncagent.api.component import node_count_of
from syncagent.kube import kinds
from syncagent.render import labels as L
from syncagent.render.naming import dynamo_namespace
from syncagent.render.workerhash import WORKER_TYPES as WORKER_TYPES
from syncagent.render.workerhash import runtime_namespace, worker_suffix

KUBERNETES = "kubernetes"
DGD_API_VERSION = "nvidia.com/v1beta1"
DGD_KIND = kinds.DGD.kind
DCD_KIND = kinds.DCD.kind
DEFAULT_TYPE = "default"


@dataclass(frozen=True, slots=True)
class AgentAccount:
    """The ServiceAccount the agent runs as: no pod it renders may run as it (its token is
    the agent's rights, docs/security.md §2)."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PullSecret:
    """A ``kubernetes.io/dockerconfigjson`` Secret and the registry hosts its ``auths`` cover."""

    name: str
    registries: frozenset[str]


@dataclass(frozen=True, slots=True)
class Infrastructure:
    """The operator configuration's ``infrastructure`` addresses (docs/operatorconfig.md):
    every ``main`` container is told them, as upstream's ``AddStandardEnvVars`` tells it."""

    nats_address: str = ""
    etcd_address: str = ""
    model_express_url: str = ""
    prometheus_endpoint: str = ""

    def standard_env(self) -> list[dict[str, Any]]:
        """The variables of the addresses that are set, in upstream's order."""
        named = (
            ("NATS_SERVER", self.nats_address),
            ("ETCD_ENDPOINTS", self.etcd_address),
            ("MODEL_EXPRESS_URL", self.model_express_url),
            ("PROMETHEUS_ENDPOINT", self.prometheus_endpoint),
        )
        return [{"name": name, "value": value} for name, value in named if value]


NO_INFRASTRUCTURE = Infrastructure()


@dataclass(frozen=True, slots=True)
class Environment:
    """Namespace-level facts. The defaults describe an empty namespace (offline render)."""

    discovery_backend: str = KUBERNETES
    pull_secrets: tuple[PullSecret, ...] = ()
    # ServiceAccounts labelled nvidia.com/dynamo-component-pod: "true"
    component_pod_service_accounts: tuple[str, ...] = ()
    # DynamoCheckpoint name -> ready; a missing entry is not ready (docs/api.md §2)
    checkpoint_ready: Mapping[str, bool] = field(default_factory=dict)
    # The agent's own ServiceAccount (None: unknown, as offline)
    agent_account: AgentAccount | None = None
    # The operator configuration's addresses (none by default, as upstream's defaults)
    infrastructure: Infrastructure = NO_INFRASTRUCTURE


@dataclass(frozen=True, slots=True)
class ComponentSource:
    """One DCD as the workload renderer sees it.

    ``labels``/``annotations`` are the DCD metadata the pod template starts from: the rendered
    metadata for a DCD controlled by a graph, the live metadata for a standalone DCD
    (docs/rendering.md §2). ``parent_graph`` is the DGD name, ``None`` for a standalone DCD.
    """

    name: str
    namespace: str
    spec: Mapping[str, Any]
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    parent_graph: str | None = None
    # The graph's nvidia.com/dynamo-operator-origin-version: never written into the DCD
    # (docs/rendering.md §1), read by the vLLM multinode launch (docs/multinode.md).
    origin_version: str | None = None

    @property
    def parent(self) -> str:
        """The name that stands for the graph in env, ServiceAccount and Dynamo namespace."""
        return self.parent_graph or self.name

    @property
    def component_name(self) -> str:
        return self.spec.get("name") or self.name

    @property
    def type(self) -> str:
        return self.spec.get("type") or ""

    @property
    def dynamo_namespace(self) -> str:
        return dynamo_namespace(
            self.namespace,
            self.parent,
            global_namespace=bool(self.spec.get("globalDynamoNamespace")),
        )

    @property
    def worker_hash(self) -> str:
        """The worker generation rendered into this worker's pods (upstream
        ``GetDCDEffectiveWorkerHash``): the DCD's ``nvidia.com/dynamo-worker-hash`` label, else
        its pod template's; ``""`` for other types."""
        template_labels = (self.pod_template.get("metadata") or {}).get("labels") or {}
        found = self.labels.get(L.WORKER_HASH) or template_labels.get(L.WORKER_HASH) or ""
        return worker_suffix(self.type, str(found))

    @property
    def runtime_namespace(self) -> str:
        """The Dynamo namespace the pods register in: a worker's carries its hash (upstream
        ``GetDCDRuntimeNamespace``)."""
        return runtime_namespace(self.dynamo_namespace, self.type, self.worker_hash)

    @property
    def node_count(self) -> int:
        return node_count_of(self.spec)

    @property
    def multinode(self) -> bool:
        return self.node_count > 1

    @property
    def model(self) -> str | None:
        return (self.spec.get("modelRef") or {}).get("name") or None

    @property
    def pod_template(self) -> Mapping[str, Any]:
        return self.spec.get("podTemplate") or {}

    @property
    def template_annotations(self) -> Mapping[str, str]:
        return (self.pod_template.get("metadata") or {}).get("annotations") or {}


def workload_type(source: ComponentSource, *, legacy_worker: bool = False) -> str:
    """The ``nvidia.com/dynamo-component-type`` value (``default`` when the type is unset)."""
    if legacy_worker and source.type in ("prefill", "decode"):
        return "worker"
    return source.type or DEFAULT_TYPE


def is_legacy_worker(component_type: str, label_sets: list[Mapping[str, str]]) -> bool:
    """Whether pods of an alpha-era prefill/decode component still say ``worker``.

    ``label_sets``: the DCD's own labels, the live Deployment/LWS template labels and the live
    Service selector. Keeping ``worker`` there avoids rolling pods that are already running.
    """
    if component_type not in ("prefill", "decode"):
        return False
    return any(
        labels.get(L.COMPONENT_TYPE) == "worker"
        and labels.get(L.SUB_COMPONENT_TYPE, "") in ("", component_type)
        for labels in label_sets
    )


def discovery_on(source: ComponentSource, env: Environment) -> bool:
    backend = source.template_annotations.get(L.DISCOVERY_BACKEND)
    return (backend if backend is not None else env.discovery_backend) == KUBERNETES


def discovery_backend(source: ComponentSource, env: Environment) -> str:
    backend = source.template_annotations.get(L.DISCOVERY_BACKEND)
    return backend if backend is not None else env.discovery_backend
