"""The Grove PodCliqueSet of a graph (docs/grove.md §1). Pure.

Pod templates come from :func:`syncagent.render.pod_template` (role ``main`` for a single-node
component, ``leader``/``worker`` for a multinode one), so Grove pods equal the other pathways'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from syncagent.api import Component, DynamoGraphDeployment
from syncagent.kube.objects import Body
from syncagent.programs.grove import field_managers as grove_manager
from syncagent.programs.grove.startup import Fixed, keep_fixed, starts_after
from syncagent.render import labels as L
from syncagent.render.component import graph_shared_objects
from syncagent.render.dcd import (
    GraphLive,
    generate_dcds,
    graph_namespace,
    graph_owner,
    graph_sources,
)
from syncagent.render.inputs import ComponentSource, Environment
from syncagent.render.model import Rendered, RenderError, build
from syncagent.render.multinode import backend_of
from syncagent.render.naming import normalize
from syncagent.render.podtemplate import pod_template
from syncagent.render.services import component_service, model_service, wants_component_service

API_VERSION = "grove.io/v1alpha1"
KIND = "PodCliqueSet"
NAME_BUDGET = 45
UPDATE_STRATEGY = "nvidia.com/grove-update-strategy"
_STRATEGIES = ("RollingRecreate", "OnDelete")
_NEVER_ANNOTATIONS = (
    L.ORIGIN_VERSION,
    "nvidia.com/current-worker-hash",
    "nvidia.com/current-worker-hash-v2",
)


def fnv32a(value: str) -> int:
    h = 0x811C9DC5
    for byte in value.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def _budget_of(c: Component) -> int:
    """The component's share of a pod name: the clique (single-node) or the scaling group plus
    its longest clique, ``<c>-ldr`` (multinode)."""
    base = len(c.lower_name)
    return base + base + len("-ldr") if c.is_multinode else base


def pcs_name(graph_name: str, components: Sequence[Component]) -> str:
    """Fits Grove's ``len(pcs) + len(pcsg) + len(pclq) <= 45`` (docs/grove.md §1)."""
    budget = max(8, NAME_BUDGET - max((_budget_of(c) for c in components), default=0))
    n = normalize(graph_name)
    if len(n) <= budget:
        return n
    return f"{n[: budget - 5]}-{fnv32a(n) & 0xFFFF:04x}"


def name_length_problems(graph_name: str, components: Sequence[Component]) -> list[str]:
    """Components whose pod names cannot fit even with the shortest PodCliqueSet name (8
    characters), as upstream's admission refuses them on Grove (``dgdComponentResourceNameLength``
    in its ``webhook/validation/dynamographdeployment_helpers.go``; its words)."""
    pcs = pcs_name(graph_name, components)
    out = []
    for i, c in enumerate(components):
        combined = len(pcs) + _budget_of(c)
        if combined <= NAME_BUDGET:
            continue
        detail = (
            f'PCS name + PCSG name + longest PodClique name "{c.lower_name}-ldr"'
            if c.is_multinode
            else "PCS name + component name"
        )
        out.append(
            f"spec.components[{i}].name: combined resource name length {combined} exceeds the "
            f"{NAME_BUDGET}-character pod-name limit ({detail}); shorten DynamoGraphDeployment "
            f'name "{graph_name}" or component name "{c.name}"'
        )
    return out


def _checked_pcs_name(graph_name: str, components: Sequence[Component]) -> str:
    too_long = name_length_problems(graph_name, components)
    if too_long:
        raise RenderError("; ".join(too_long))
    return pcs_name(graph_name, components)


def child_name(pcs: str, component: str) -> str:
    """The PodClique (single-node) or PodCliqueScalingGroup (multinode) of a component."""
    return f"{pcs}-0-{component.lower()}"


def clique_names(components: Sequence[Component]) -> list[str]:
    out = []
    for c in components:
        base = c.lower_name
        out += [f"{base}-ldr", f"{base}-wkr"] if c.is_multinode else [base]
    return out


def clique_set_change(rendered: Rendered, live: Mapping[str, Any] | None) -> str | None:
    """The refusal message when the clique set differs from the live PCS (None = same/absent)."""
    if live is None:
        return None
    ours = {c["name"] for c in rendered.body["spec"]["template"]["cliques"]}
    template = (live.get("spec") or {}).get("template") or {}
    theirs = {c.get("name") for c in template.get("cliques") or ()}
    if ours == theirs:
        return None
    added = ",".join(sorted(ours - theirs)) or "none"
    removed = ",".join(sorted(str(n) for n in theirs - ours)) or "none"
    name = Body(live).meta.name
    return (
        f"PodCliqueSet {name}: the set of cliques cannot change (added: {added}, removed: "
        f"{removed}); delete and recreate the graph to change it"
    )


def live_template_replicas(live: Mapping[str, Any] | None) -> dict[str, int]:
    """Template replicas the scale writes control: single-node cliques and scaling groups."""
    if not live:
        return {}
    template = (live.get("spec") or {}).get("template") or {}
    in_groups = {
        n for g in template.get("podCliqueScalingGroups") or () for n in g.get("cliqueNames") or ()
    }
    out = {}
    for clique in template.get("cliques") or ():
        if clique.get("name") not in in_groups and "replicas" in (clique.get("spec") or {}):
            out[str(clique["name"])] = int(clique["spec"]["replicas"])
    for group in template.get("podCliqueScalingGroups") or ():
        if "replicas" in group:
            out[str(group["name"])] = int(group["replicas"])
    return out


def desired_replicas(source: ComponentSource) -> int:
    value = source.spec.get("replicas")
    return 1 if value is None else int(value)


def _clique(
    source: ComponentSource,
    *,
    name: str,
    role: str,
    graph: str,
    env: Environment,
    replicas: int,
    min_available: int,
    starts_after: list[str] | None = None,
) -> dict[str, Any]:
    template = pod_template(source, role=role, env=env, grove=True)  # type: ignore[arg-type]
    meta = template.get("metadata") or {}
    labels = {**(meta.get("labels") or {}), L.SELECTOR: f"{graph}-{source.component_name.lower()}"}
    annotations = dict(meta.get("annotations") or {})
    # Upstream names the base model in the annotations of a DCD's pods only
    # (GetDCDKubeAnnotations); a clique carries it only when the user wrote it.
    written = {**source.annotations, **source.template_annotations}
    annotations.pop(L.BASE_MODEL, None)
    if L.BASE_MODEL in written:
        annotations[L.BASE_MODEL] = written[L.BASE_MODEL]
    spec: dict[str, Any] = {
        "roleName": name,
        "replicas": replicas,
        "minAvailable": min_available,
    }
    if starts_after:
        spec["startsAfter"] = starts_after
    spec["podSpec"] = template["spec"]
    clique: dict[str, Any] = {"name": name, "labels": labels}
    if annotations:
        clique["annotations"] = annotations
    clique["spec"] = spec
    return clique


def render_pod_clique_set(
    graph: DynamoGraphDeployment,
    *,
    env: Environment,
    live: GraphLive | None = None,
    live_replicas: Mapping[str, int] | None = None,
    fixed: Fixed | None = None,
) -> Rendered:
    """The PCS; ``live_replicas`` (from :func:`live_template_replicas`) are echoed when set,
    and so are the values Grove fixed when the live PCS was created (``fixed``, from
    :func:`~syncagent.programs.grove.startup.live_fixed`)."""
    components = graph.spec.components
    name = _checked_pcs_name(graph.name, components)
    sources = {
        s.spec["name"]: s
        for s in graph_sources(graph, generate_dcds(graph, live=live, env=env, grove=True))
    }
    cliques, groups = _cliques_and_groups(
        components,
        sources,
        graph_name=graph.name,
        env=env,
        echo=dict(live_replicas or {}),
    )
    pcs_spec: dict[str, Any] = {"replicas": 1}
    strategy = (graph.metadata.annotations or {}).get(UPDATE_STRATEGY)
    if strategy in _STRATEGIES:
        pcs_spec["updateStrategy"] = {"type": strategy}
    pcs_spec["template"] = _template(cliques, groups, fixed=fixed)
    return build(
        manager=grove_manager.MANAGER.name,
        api_version=API_VERSION,
        kind=KIND,
        name=name,
        namespace=graph_namespace(graph),
        labels={**(graph.spec.labels or {}), L.GRAPH_NAME: graph.name},
        annotations={
            k: v for k, v in (graph.spec.annotations or {}).items() if k not in _NEVER_ANNOTATIONS
        },
        owner=graph_owner(graph),
        spec=pcs_spec,
    )


def _template(
    cliques: list[dict[str, Any]], groups: list[dict[str, Any]], *, fixed: Fixed | None
) -> dict[str, Any]:
    grouped = {n for g in groups for n in g["cliqueNames"]}
    template: dict[str, Any] = {
        "cliqueStartupType": keep_fixed(cliques, grouped=grouped, fixed=fixed),
        "headlessServiceConfig": {"publishNotReadyAddresses": True},
        "terminationDelay": "15m0s",
        "cliques": cliques,
    }
    if groups:
        template["podCliqueScalingGroups"] = groups
    return template


def _cliques_and_groups(
    components: Sequence[Component],
    sources: Mapping[str, ComponentSource],
    *,
    graph_name: str,
    env: Environment,
    echo: Mapping[str, int],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One clique per single-node component; a leader and a worker clique plus a scaling
    group per multinode one, ordered as the component's own backend needs
    (:func:`~syncagent.programs.grove.startup.starts_after`)."""
    cliques: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for component in components:
        source = sources[component.name]
        base = source.component_name.lower()
        common = {"graph": graph_name, "env": env}
        if not source.multinode:
            replicas = echo.get(base, desired_replicas(source))
            cliques.append(
                _clique(
                    source,
                    name=base,
                    role="main",
                    replicas=replicas,
                    min_available=component.min_available or 1,
                    **common,
                )
            )
            continue
        order = starts_after(backend_of(source).name, base=base, multinode=True)
        for suffix, role, count in (("ldr", "leader", 1), ("wkr", "worker", source.node_count - 1)):
            starts = order.get(f"{base}-{suffix}")
            cliques.append(
                _clique(
                    source,
                    name=f"{base}-{suffix}",
                    role=role,
                    replicas=count,
                    # Every rank of the engine must be up (upstream buildCliqueForRole).
                    min_available=count,
                    starts_after=starts,
                    **common,
                )
            )
        groups.append(
            {
                "name": base,
                "cliqueNames": [f"{base}-ldr", f"{base}-wkr"],
                "replicas": echo.get(base, desired_replicas(source)),
                "minAvailable": component.min_available or 1,
            }
        )
    return cliques, groups


def grove_component_service(
    graph: DynamoGraphDeployment, source: ComponentSource, *, env: Environment
) -> Rendered:
    """A component's Service on the Grove pathway: labelled as on the others (docs/parity.md
    D8), annotated as upstream's (``GetDGDComponentResourceAnnotations``): the graph's
    ``spec.annotations``, then the component's own pod-template annotations, nothing derived."""
    component = next(c for c in graph.spec.components if c.name == source.component_name)
    written = {
        **(graph.spec.annotations or {}),
        **(component.pod_metadata.get("annotations") or {}),
    }
    written.pop(L.ORIGIN_VERSION, None)
    return component_service(
        source, env=env, owner=graph_owner(graph), grove=True, annotations=written
    )


def render_grove_graph(graph: DynamoGraphDeployment, *, env: Environment) -> list[Rendered]:
    """Every object the Grove program applies for a new graph, offline (``syncagent render``):
    identity and wait-for-leader ConfigMap, the PCS, component Services (DCD-form selector)
    and model Services."""
    owner = graph_owner(graph)
    sources = graph_sources(graph, generate_dcds(graph, env=env))
    objects = graph_shared_objects(graph, sources, env=env)
    objects.append(render_pod_clique_set(graph, env=env))
    models: dict[str, Rendered] = {}
    for source in sources:
        if wants_component_service(source, env):
            objects.append(grove_component_service(graph, source, env=env))
        if source.model and source.model not in models:
            models[source.model] = model_service(
                source.model, namespace=source.namespace, owner=owner
            )
    return objects + list(models.values())
