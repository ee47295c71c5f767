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
