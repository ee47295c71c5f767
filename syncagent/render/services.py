"""Component Services and the namespace-wide model Service (docs/rendering.md §4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fieldmanagers import services
from syncagent.kube.objects import OwnerRef
from syncagent.render import labels as L
from syncagent.render.inputs import ComponentSource, Environment, discovery_on, workload_type
from syncagent.render.model import Rendered, build
from syncagent.render.naming import component_service_name, model_hash, model_service_name
from syncagent.render.workload_meta import workload_annotations, workload_labels

_PORTS: dict[str, dict[str, Any]] = {
    "frontend": {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"},
    "epp": {
        "name": "grpc",
        "port": 9002,
        "targetPort": 9002,
        "protocol": "TCP",
        "appProtocol": "http2",
    },
}
_SYSTEM_PORT = {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}


def wants_component_service(source: ComponentSource, env: Environment) -> bool:
    """A component Service exists when Kubernetes discovery is on or the type is frontend."""
    return source.type == "frontend" or discovery_on(source, env)


def component_selector(source: ComponentSource, *, legacy_worker: bool = False) -> dict[str, str]:
    selector = {
        L.COMPONENT_TYPE: workload_type(source, legacy_worker=legacy_worker),
        L.DYNAMO_NAMESPACE: source.dynamo_namespace,
        L.COMPONENT: source.component_name,
    }
    if source.multinode:
        selector[L.ROLE] = "leader"
    return selector


def service_labels(source: ComponentSource, env: Environment, *, grove: bool) -> dict[str, str]:
    """The workload labels plus the discovery labels when Kubernetes discovery is on (upstream
    ``GenerateComponentService``); on every pathway, Grove's included (docs/parity.md D8), but
    for the sub-component type and the model hash, which upstream derives from a DCD (Grove
    has none)."""
    labels = workload_labels(source)
    if grove:
        for key in (L.SUB_COMPONENT_TYPE, L.BASE_MODEL_HASH):
            labels.pop(key, None)
    if discovery_on(source, env):
        labels[L.DISCOVERY_BACKEND] = "kubernetes"
        labels[L.DISCOVERY_ENABLED] = "true"
    return labels


def component_service(
    source: ComponentSource,
    *,
    env: Environment,
    owner: OwnerRef,
    legacy_worker: bool = False,
    selector: Mapping[str, str] | None = None,
    grove: bool = False,
    annotations: Mapping[str, str] | None = None,
) -> Rendered:
    """The component Service; ``selector`` overrides the target one (a live selector kept
    until the new workload is ready, docs/rendering.md §4)."""
    port = _PORTS.get(source.type, _SYSTEM_PORT)
    spec = {
        "type": "ClusterIP",
        "selector": dict(selector or component_selector(source, legacy_worker=legacy_worker)),
        "ports": [dict(port)],
    }
    return build(
        manager=services.MANAGER.name,
        api_version="v1",
        kind="Service",
        name=component_service_name(source.name),
        namespace=source.namespace,
        labels=service_labels(source, env, grove=grove),
        annotations=dict(annotations) if annotations is not None else workload_annotations(source),
        owner=owner,
        spec=spec,
    )


def model_service(model: str, *, namespace: str, owner: OwnerRef | None = None) -> Rendered:
    """``dynamo-model-<hash8>``: identical content from every owner, no per-owner metadata."""
    digest = model_hash(model)
    return build(
        manager=services.MANAGER.name,
        api_version="v1",
        kind="Service",
        name=model_service_name(model),
        namespace=namespace,
        labels={L.BASE_MODEL_HASH: digest, L.MANAGED_BY: L.MANAGED_BY_OPERATOR},
        annotations={L.BASE_MODEL: model},
        owner=owner,
        shared=True,
        spec={
            "clusterIP": "None",
            "publishNotReadyAddresses": False,
            "selector": {L.BASE_MODEL_HASH: digest},
            "ports": [{"name": "system", "port": 9090, "targetPort": 9090, "protocol": "TCP"}],
        },
    )
