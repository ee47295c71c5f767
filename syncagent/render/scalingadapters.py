"""A graph's scaling adapters (pure): one DGDSA per component with ``scalingAdapter`` set
(even ``{}``), named, labelled and referenced as upstream's graph reconciler makes them
(docs/api.md §4).

Each adapter is two writes: the seed (the create, with the component's replicas, as the
adapter's own from then on) and the content every reconcile applies (without replicas).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fieldmanagers import scalingadapters
from syncagent.api import DynamoGraphDeployment
from syncagent.api.scalingadapter import ADAPTER_API_VERSION, ADAPTER_KIND
from syncagent.kube.objects import OwnerRef
from syncagent.render import labels as L
from syncagent.render.model import Rendered, build


@dataclass(frozen=True, slots=True)
class Adapter:
    """``content``: what each reconcile applies; ``replicas``: the seed, on create only."""

    component: str
    content: Rendered
    replicas: int

    def seed(self) -> dict[str, Any]:
        """The create body: the content, the controller reference and the seed replicas."""
        body = self.content.create_manifest()
        body["spec"]["replicas"] = self.replicas
        return body


def adapter_name(graph: str, component: str) -> str:
    """Upstream's ``generateAdapterName``: ``<graph>-<component, lower case>``."""
    return f"{graph}-{component.lower()}"


def pod_selector(graph: str, component: str) -> str:
    """The label selector of the component's pods, as ``status.selector`` (HPA reads it)."""
    return f"{L.COMPONENT}={component},{L.GRAPH_NAME}={graph}"


def adapters(graph: DynamoGraphDeployment, *, owner: OwnerRef) -> list[Adapter]:
    """The adapters ``graph`` asks for, in component order."""
    namespace = graph.namespace or "default"
    out = []
    for component in graph.spec.components:
        if component.scaling_adapter is None:
            continue
        content = build(
            manager=scalingadapters.MANAGER.name,
            api_version=ADAPTER_API_VERSION,
            kind=ADAPTER_KIND,
            name=adapter_name(graph.name, component.name),
            namespace=namespace,
            labels={L.GRAPH_NAME: graph.name, L.COMPONENT: component.name},
            owner=owner,
            spec={"dgdRef": {"name": graph.name, "componentName": component.name}},
        )
        out.append(Adapter(component.name, content, component.effective_replicas))
    return out


@dataclass(frozen=True, slots=True)
class Scale:
    """One component whose replicas its adapter changes: ``index`` in ``spec.components``."""

    component: str
    index: int
    before: int
    after: int


def scales(graph: DynamoGraphDeployment, wanted: dict[str, int]) -> list[Scale]:
    """What upstream's adapter controller writes into the graph: for each component that still
    asks for an adapter, the replicas ``wanted`` (adapter replicas by component) gives it when
    they differ from its own (unset counts as 1)."""
    out = []
    for index, component in enumerate(graph.spec.components):
        after = wanted.get(component.name)
        if after is None or component.scaling_adapter is None:
            continue
        if after != component.effective_replicas:
            out.append(Scale(component.name, index, component.effective_replicas, after))
    return out


def scale_patch(changes: list[Scale]) -> list[dict[str, Any]]:
    """A JSON patch of the graph by index, each entry guarded by the component's name, so a
    graph whose components moved meanwhile is refused rather than scaled at the wrong one."""
    ops: list[dict[str, Any]] = []
    for change in changes:
        at = f"/spec/components/{change.index}"
        ops.append({"op": "test", "path": f"{at}/name", "value": change.component})
        ops.append({"op": "add", "path": f"{at}/replicas", "value": change.after})
    return ops


def adapter_status(
    graph: str, component: str, *, replicas: int, last_scale_time: str | None
) -> dict[str, Any]:
    """The adapter's status as upstream's controller writes it: its own replicas and the
    selector of the component's pods (what HPA reads through ``/scale``)."""
    status: dict[str, Any] = {"replicas": replicas, "selector": pod_selector(graph, component)}
    if last_scale_time:
        status["lastScaleTime"] = last_scale_time
    return status
