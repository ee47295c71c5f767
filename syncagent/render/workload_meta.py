"""Metadata and replica rules shared by the Deployment and the LeaderWorkerSet (rendering.md §3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syncagent.api.component import checkpoint_of
from syncagent.kube.objects import OwnerRef
from syncagent.render import labels as L
from syncagent.render.inputs import DCD_KIND, DGD_API_VERSION, ComponentSource, Environment
from syncagent.render.naming import model_hash
from syncagent.render.podtemplate import pod_annotations

_DROPPED_ANNOTATIONS = (L.ORIGIN_VERSION, L.KUBECTL_LAST_APPLIED)


def dcd_owner(source: ComponentSource, *, uid: str = "") -> OwnerRef:
    return OwnerRef(DGD_API_VERSION, DCD_KIND, source.name, uid)


def workload_labels(source: ComponentSource, template_labels: Mapping[str, str]) -> dict[str, str]:
    """DCD labels -> template labels -> identity labels."""
    out = {**source.labels, **template_labels}
    out[L.COMPONENT] = source.component_name
    out[L.DYNAMO_NAMESPACE] = source.dynamo_namespace
    if source.parent_graph:
        out[L.GRAPH_NAME] = source.parent_graph
    if source.model:
        out[L.BASE_MODEL_HASH] = model_hash(source.model)
    return out


def workload_annotations(source: ComponentSource) -> dict[str, str]:
    out = pod_annotations(source)
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
