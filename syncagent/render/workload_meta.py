"""Metadata and replica rules shared by the Deployment and the LeaderWorkerSet (docs/rendering.md §3)."""

from __future__ import annotations

from typing import Any

from syncagent.api.component import checkpoint_of
from syncagent.kube.objects import OwnerRef
from syncagent.render import labels as L
from syncagent.render.inputs import DCD_KIND, DGD_API_VERSION, ComponentSource, Environment
from syncagent.render.naming import model_hash

_DROPPED_ANNOTATIONS = (L.ORIGIN_VERSION, L.KUBECTL_LAST_APPLIED)


def dcd_owner(source: ComponentSource, *, uid: str = "") -> OwnerRef:
    return OwnerRef(DGD_API_VERSION, DCD_KIND, source.name, uid)


def workload_labels(source: ComponentSource) -> dict[str, str]:
    """DCD labels -> the component's pod-template labels -> identity labels (upstream
    ``GetDCDKubeLabels``), with a prefill or decode worker's sub-component type (upstream reads
    it from the DCD's v1alpha1 form, where those types are ``worker`` + the sub-type). None of
    the labels only pods carry (``nvidia.com/selector``, the component type,
    ``metrics-enabled``, the discovery labels, ``role``): upstream leaves them off."""
    template_labels = (source.pod_template.get("metadata") or {}).get("labels") or {}
    out = {**source.labels, **template_labels}
    if source.type in ("prefill", "decode"):
        out[L.SUB_COMPONENT_TYPE] = source.type
    out[L.COMPONENT] = source.component_name
    out[L.DYNAMO_NAMESPACE] = source.dynamo_namespace
    if source.parent_graph:
        out[L.GRAPH_NAME] = source.parent_graph
    if source.model:
        out[L.BASE_MODEL_HASH] = model_hash(source.model)
    return out


def workload_annotations(source: ComponentSource) -> dict[str, str]:
    """The component's pod-template annotations + ``nvidia.com/dynamo-base-model`` (upstream
    ``GetDCDKubeAnnotations``): a Deployment's and a component Service's. Not the checkpoint
    markers, which only pods carry."""
    out = dict(source.template_annotations)
    if source.model:
        out[L.BASE_MODEL] = source.model
    for key in _DROPPED_ANNOTATIONS:
        out.pop(key, None)
    return out


def replicas(source: ComponentSource, env: Environment) -> int | None:
    """The component's replicas; 0 while a WaitForCheckpoint checkpoint is not ready."""
    checkpoint = checkpoint_of(source.spec)
    if checkpoint is not None and checkpoint.holds(env.checkpoint_ready):
        return 0
    value: Any = source.spec.get("replicas")
    return None if value is None else int(value)
