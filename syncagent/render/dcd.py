"""DGD -> DCD generation (docs/rendering.md §1)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fieldmanagers import components as components_manager
from syncagent.api.component import Component, checkpoint_of
from syncagent.api.graph import DynamoGraphDeployment
from syncagent.kube.objects import Body, OwnerRef
from syncagent.render import labels as L
from syncagent.render.containers import MAIN, PLANNER_SERVICE_ACCOUNT, merge_env
from syncagent.render.inputs import (
    DCD_KIND,
    DGD_API_VERSION,
    DGD_KIND,
    WORKER_TYPES,
    ComponentSource,
    Environment,
)
from syncagent.render.model import Rendered, RenderError, build
from syncagent.render.naming import dcd_name, dynamo_namespace
from syncagent.render.workerhash import active_worker_hash, is_worker, worker_suffix

BACKENDS = ("vllm", "sglang", "trtllm")
_BACKEND_PATTERN = re.compile(r"dynamo\.(vllm|sglang|trtllm)")
# Upstream bookkeeping we never write (docs/rendering.md §1).
_NEVER_LABELS = (L.WORKER_HASH,)
_NEVER_ANNOTATIONS = (
    L.ORIGIN_VERSION,
    "nvidia.com/current-worker-hash",
    "nvidia.com/current-worker-hash-v2",
)


@dataclass(frozen=True, slots=True)
class GraphLive:
    """Live values DCD generation keeps (docs/rendering.md §1 steps 1 and 4).

    Keys are component names. ``restarting`` holds the components the restart state
    annotates in this reconcile (docs/lifecycle.md §2).
    """

    backend: Mapping[str, str] = field(default_factory=dict)
    restart_at: Mapping[str, str] = field(default_factory=dict)
    restarting: frozenset[str] = frozenset()


def graph_owner(graph: DynamoGraphDeployment) -> OwnerRef:
    return OwnerRef(DGD_API_VERSION, DGD_KIND, graph.name, graph.metadata.uid or "")


def graph_namespace(graph: DynamoGraphDeployment) -> str:
    """Where the graph's children live (``default`` for a manifest without a namespace)."""
    return graph.namespace or "default"


def detect_backend(components: Sequence[Component]) -> str:
    """The backend named by worker commands; ``""`` when none, an error when two differ."""
    found: list[str] = []
    for component in components:
        if component.type not in WORKER_TYPES:
            continue
        main = component.main_container() or {}
        words = " ".join(str(w) for w in [*(main.get("command") or []), *(main.get("args") or [])])
        for match in _BACKEND_PATTERN.finditer(words):
            if match.group(1) not in found:
                found.append(match.group(1))
    if len(found) > 1:
        raise RenderError(
            "multiple backend frameworks detected for generated DynamoComponentDeployments: "
            f"{found[0]} and {found[1]}"
        )
    return found[0] if found else ""


def generate_dcds(
    graph: DynamoGraphDeployment,
    *,
    live: GraphLive | None = None,
    env: Environment | None = None,
    grove: bool = False,
    worker_hash: str = "",
) -> list[Rendered]:
    """One DCD per component, in component order (raises :class:`RenderError`).

    ``grove``: the components as the Grove renderer reads them (upstream renders Grove pods from
    the component, not from a DCD, so a planner keeps its own ServiceAccount there).
    ``worker_hash``: the graph's recorded worker generation (:func:`graph_worker_hash`; the
    Component pathway only), which worker DCDs carry in their names and labels."""
    live = live or GraphLive()
    components = graph.spec.components
    detected: list[str] = []

    def backend_for(component: Component) -> str:
        if graph.spec.backend_framework:
            return graph.spec.backend_framework
        if live.backend.get(component.name):
            return live.backend[component.name]
        if not detected:
            detected.append(detect_backend(components))
        return detected[0]

    return [
        generate_dcd(
            graph,
            c,
            backend=backend_for(c),
            live=live,
            env=env,
            grove=grove,
            worker_hash=worker_hash,
        )
        for c in components
    ]


def graph_worker_hash(graph: DynamoGraphDeployment) -> str:
    """The worker generation upstream's operator recorded on ``graph`` (``""`` for none)."""
    return active_worker_hash(graph.metadata.annotations)


def component_dcd_name(
    graph: DynamoGraphDeployment, component: Component, *, worker_hash: str
) -> str:
    """The DCD name of ``component`` (upstream ``GetDCDResourceName``): a worker's carries
    ``worker_hash``."""
    return dcd_name(graph.name, component.name, suffix=worker_suffix(component.type, worker_hash))


def generate_dcd(
    graph: DynamoGraphDeployment,
    component: Component,
    *,
    backend: str,
    live: GraphLive | None = None,
    env: Environment | None = None,
    grove: bool = False,
    worker_hash: str = "",
) -> Rendered:
    live = live or GraphLive()
    suffix = worker_suffix(component.type, worker_hash)
    name = dcd_name(graph.name, component.name, suffix=suffix)
    namespace = graph_namespace(graph)
    # Upstream's generated DCD (generateSingleDCD) is labelled with the component's own
    # pod-template labels and its identity, and carries no annotations: the graph's
    # spec.labels/annotations reach the pods through the pod template (docs/rendering.md §1 step 3).
    labels = {
        **(component.pod_metadata.get("labels") or {}),
        L.COMPONENT: component.name,
        L.DYNAMO_NAMESPACE: dynamo_namespace(
            namespace, graph.name, global_namespace=bool(component.global_dynamo_namespace)
        ),
        L.GRAPH_NAME: graph.name,
    }
    labels = _without(labels, _NEVER_LABELS)
    if suffix:
        # Upstream labels a worker DCD and its pod template with the generation it names.
        labels[L.WORKER_HASH] = suffix
    spec = dcd_spec(
        graph,
        component,
        backend=backend,
        live=live,
        env=env or Environment(),
        grove=grove,
        worker_hash=suffix,
    )
    return build(
        manager=components_manager.MANAGER.name,
        api_version=DGD_API_VERSION,
        kind=DCD_KIND,
        name=name,
        namespace=namespace,
        labels=labels,
        owner=graph_owner(graph),
        spec=spec,
    )


def dcd_spec(
    graph: DynamoGraphDeployment,
    component: Component,
    *,
    backend: str,
    live: GraphLive,
    env: Environment,
    grove: bool = False,
    worker_hash: str = "",
) -> dict[str, Any]:
    """The DCD ``spec``: a copy of the component with the changes of docs/rendering.md §1;
    ``worker_hash``: the worker generation its pod template is labelled with (``""``: none)."""
    spec = {k: copy.deepcopy(v) for k, v in component.wire().items() if k != "providerOverride"}
    # Upstream's admission defaulting gives every component of a graph replicas 1 when unset
    # (dynamographdeployment_handler.go), so its DCDs and workloads state it.
    spec.setdefault("replicas", 1)
    if backend:
        spec["backendFramework"] = backend
    template = spec.setdefault("podTemplate", {})
    _merge_graph_env(template, graph.spec.env or [])
    _merge_template_metadata(template, graph, component, live=live, worker_hash=worker_hash)
    if grove:
        _grove_discovery_backend(template, graph, env)
    ctype = component.type
    if ctype == "planner" and not grove:
        # Upstream sets it on every planner DCD a graph generates, over the component's own
        # (generateSingleDCD); its Grove pods keep the component's, the pod default fills a gap.
        template.setdefault("spec", {})["serviceAccountName"] = PLANNER_SERVICE_ACCOUNT
    if ctype == "epp":
        template.setdefault("metadata", {}).setdefault("annotations", {}).setdefault(
            L.ISTIO_INJECT, "false"
        )
    _checkpoint(spec, env)
    return spec


def _merge_graph_env(template: dict[str, Any], graph_env: list[dict[str, Any]]) -> None:
    main = next(
        (c for c in (template.get("spec") or {}).get("containers") or [] if c.get("name") == MAIN),
        None,
    )
    if main is None or not graph_env:
        return
    main["env"] = merge_env(graph_env, main.get("env") or [])


def _merge_template_metadata(
    template: dict[str, Any],
    graph: DynamoGraphDeployment,
    component: Component,
    *,
    live: GraphLive,
    worker_hash: str = "",
) -> None:
    graph_annotations = graph.metadata.annotations or {}
    metadata = template.setdefault("metadata", {})
    annotations = {
        **(graph.spec.annotations or {}),
        **{k: graph_annotations[k] for k in L.COPIED_GRAPH_ANNOTATIONS if k in graph_annotations},
        **(metadata.get("annotations") or {}),
    }
    restart_at = _restart_at(graph, component, live)
    if restart_at is not None:
        annotations[L.RESTART_AT] = restart_at
    else:
        annotations.pop(L.RESTART_AT, None)
    labels = _without(
        {**(graph.spec.labels or {}), **(metadata.get("labels") or {})}, _NEVER_LABELS
    )
    if worker_hash:
        labels[L.WORKER_HASH] = worker_hash
    _set_or_drop(metadata, "annotations", _without(annotations, _NEVER_ANNOTATIONS))
    _set_or_drop(metadata, "labels", labels)
    if not metadata:
        template.pop("metadata")


def _grove_discovery_backend(
    template: dict[str, Any], graph: DynamoGraphDeployment, env: Environment
) -> None:
    """Upstream's Grove renderer stamps the graph's effective discovery backend (its annotation,
    else the agent's default) on every component's pod template, over the component's own
    (``GenerateGrovePodCliqueSet``): it reaches the clique annotations and decides discovery."""
    backend = (graph.metadata.annotations or {}).get(L.DISCOVERY_BACKEND, env.discovery_backend)
    if backend:
        metadata = template.setdefault("metadata", {})
        metadata.setdefault("annotations", {})[L.DISCOVERY_BACKEND] = backend


def _restart_at(graph: DynamoGraphDeployment, component: Component, live: GraphLive) -> str | None:
    restart_id = graph.spec.restart.id if graph.spec.restart is not None else None
    if restart_id and component.name in live.restarting:
        return restart_id
    return live.restart_at.get(component.name)


def _checkpoint(spec: dict[str, Any], env: Environment) -> None:
    use = checkpoint_of(spec)
    if use is None:
        return
    spec["experimental"]["checkpoint"].setdefault("startupPolicy", use.startup_policy)
    if use.holds(env.checkpoint_ready):
        spec["replicas"] = 0


def _without(values: Mapping[str, str], keys: Sequence[str]) -> dict[str, str]:
    return {k: v for k, v in values.items() if k not in keys}


def _set_or_drop(target: dict[str, Any], key: str, value: dict[str, str]) -> None:
    if value:
        target[key] = value
    else:
        target.pop(key, None)


def source_of(
    dcd: Rendered, *, graph: str | None, origin_version: str | None = None
) -> ComponentSource:
    """The workload renderer's view of a DCD this module rendered."""
    meta = dcd.body["metadata"]
    return ComponentSource(
        name=dcd.name,
        namespace=dcd.namespace,
        spec=dcd.body["spec"],
        labels=meta.get("labels") or {},
        annotations=meta.get("annotations") or {},
        parent_graph=graph,
        origin_version=origin_version,
    )


def origin_version(graph: DynamoGraphDeployment, component: str) -> str | None:
    """The operator origin version the pods of ``component`` launch by (docs/multinode.md).

    Upstream copies it into each component's pod template: the component's own value first,
    then the graph's metadata annotation, then ``spec.annotations`` (lowest). We never write
    it into DCDs (docs/rendering.md §1), so the renderer reads it here instead.
    """
    entry = graph.spec.component(component)
    for values in (
        (entry.pod_metadata.get("annotations") or {}) if entry is not None else {},
        graph.metadata.annotations or {},
        graph.spec.annotations or {},
    ):
        if L.ORIGIN_VERSION in values:
            return str(values[L.ORIGIN_VERSION])
    return None


def graph_sources(graph: DynamoGraphDeployment, dcds: Sequence[Rendered]) -> list[ComponentSource]:
    """The workload renderer's view of the DCDs generated for ``graph``, in the same order."""
    return [
        source_of(d, graph=graph.name, origin_version=origin_version(graph, d.body["spec"]["name"]))
        for d in dcds
    ]


def source_for_component(
    graph: DynamoGraphDeployment,
    name: str,
    *,
    live: GraphLive | None = None,
    env: Environment | None = None,
) -> ComponentSource:
    """A component of ``graph`` as the workload renderer sees it, without a DCD object.

    The DisaggregatedSet pathway renders its roles from this, so its leader/worker templates
    equal those of the DCD's LeaderWorkerSet for the same component.
    """
    for source in graph_sources(graph, generate_dcds(graph, live=live, env=env)):
        if source.spec["name"] == name:
            return source
    raise KeyError(f"component {name!r} is not in the graph")


def source_of_object(dcd: Mapping[str, Any]) -> ComponentSource:
    """The workload renderer's view of a live DCD.

    For a DCD controlled by a graph, the metadata is recomputed from the spec (which already
    carries the graph's labels and annotations), so labels others add to the live DCD never
    reach its pods (docs/rendering.md §2). A standalone DCD uses its live metadata.
    """
    view = Body(dcd)
    meta, spec = view.meta, view.spec
    graph = next((ref.name for ref, _ in view.owners() if ref.kind == DGD_KIND), None)
    namespace = meta.namespace or "default"
    if graph is None:
        return ComponentSource(
            name=meta.name,
            namespace=namespace,
            spec=spec,
            labels=meta.labels,
            annotations=meta.annotations,
        )
    template_labels = ((spec.get("podTemplate") or {}).get("metadata") or {}).get("labels") or {}
    labels = {
        **template_labels,
        L.COMPONENT: spec.get("name") or meta.name,
        L.DYNAMO_NAMESPACE: dynamo_namespace(
            namespace, graph, global_namespace=bool(spec.get("globalDynamoNamespace"))
        ),
        L.GRAPH_NAME: graph,
    }
    kept = _without(labels, _NEVER_LABELS)
    if is_worker(spec.get("type")) and template_labels.get(L.WORKER_HASH):
        # The generation its pod template names (upstream's or ours, from the graph's recorded
        # hash): re-rendering a worker DCD a replacement is coming up for must not roll its pods.
        kept[L.WORKER_HASH] = template_labels[L.WORKER_HASH]
    return ComponentSource(
        name=meta.name,
        namespace=namespace,
        spec=spec,
        labels=kept,
        parent_graph=graph,
    )
