"""The DisaggregatedSet of a graph on the DS pathway (docs/disaggregatedset.md §2-4). Pure.

Roles are rendered from the same leader/worker templates as a DCD's LeaderWorkerSet
(:func:`syncagent.render.lws.leader_worker_templates`), so both pathways run identical pods.
The template hash ``F`` is computed by the program from the server's dry-run result; this module
only knows how to hash templates and where ``F`` goes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from syncagent.api import Component, DynamoGraphDeployment
from syncagent.programs.disaggregatedset import field_managers as ds_manager
from syncagent.render import labels as L
from syncagent.render.component import graph_shared_objects, render_component
from syncagent.render.dcd import (
    GraphLive,
    generate_dcds,
    graph_namespace,
    graph_owner,
    graph_sources,
)
from syncagent.render.inputs import Environment
from syncagent.render.lws import leader_worker_templates, network_config
from syncagent.render.model import Rendered, build
from syncagent.render.naming import normalize, trunc, trunc_with_hash
from syncagent.render.services import component_service, model_service, wants_component_service

API_VERSION = "disaggregatedset.x-k8s.io/v1"
KIND = "DisaggregatedSet"
GROUP = "disaggregatedset.x-k8s.io"
NAME_LABEL = GROUP + "/name"
ROLE_LABEL = GROUP + "/role"
REVISION_LABEL = GROUP + "/revision"
SLICE_LABEL = GROUP + "/slice"
TEMPLATE_HASH = "nvidia.com/dynamo-ds-template-hash"
DS_NAME_MAX = 18
ROLE_NAME_MAX = 10
MAX_ROLES = 10
_TYPED_ROLES = ("prefill", "decode")
# Never written: upstream bookkeeping (docs/rendering.md §1).
_NEVER_ANNOTATIONS = (
    L.ORIGIN_VERSION,
    "nvidia.com/current-worker-hash",
    "nvidia.com/current-worker-hash-v2",
)


def ds_name(graph_name: str) -> str:
    """``truncWithHash(normalize(dgd.name), 18)`` (docs/disaggregatedset.md §2)."""
    return trunc_with_hash(normalize(graph_name), DS_NAME_MAX)


def role_names(components: Sequence[Component]) -> dict[str, str]:
    """Component name -> role name, for the selected components in spec order."""
    used: list[str] = []
    out: dict[str, str] = {}
    for component in components:
        ctype = component.type or ""
        typed = ctype in _TYPED_ROLES and ctype not in used
        prefix = trunc_with_hash(ctype if typed else normalize(component.name), ROLE_NAME_MAX)
        role, i = prefix, 2
        while role in used:
            suffix = f"-{i}"
            role = trunc(prefix, ROLE_NAME_MAX - len(suffix)) + suffix
            i += 1
        used.append(role)
        out[component.name] = role
    return out


def child_name(ds: str, revision: str, role: str, *, slice_index: int | None = None) -> str:
    """A child LeaderWorkerSet: ``<ds>-<rev>-<role>`` (v0.9.0) or ``<ds>-<slice>-<rev>-<role>``."""
    if slice_index is None:
        return f"{ds}-{revision}-{role}"
    return f"{ds}-{slice_index}-{revision}-{role}"


def selected_components(components: Sequence[Component]) -> list[Component]:
    """Candidates of §1: multinode (nodeCount > 1) worker-type components, in spec order."""
    return [c for c in components if c.is_worker_type and c.is_multinode]


def rollout_strategy() -> dict[str, Any]:
    """Surge-first, as the DS planner does without a block; ``partition`` must stay 0."""
    return {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0, "partition": 0},
    }


@dataclass(frozen=True, slots=True)
class DsRender:
    """The desired DS without ``F`` (digest material) and what the program needs beside it."""

    rendered: Rendered
    roles: dict[str, str]  # component name -> role name


def render_disaggregated_set(
    graph: DynamoGraphDeployment,
    *,
    env: Environment,
    live: GraphLive | None = None,
    gated: bool = False,
) -> DsRender:
    """The DS of ``graph`` (no template hash yet); raises :class:`RenderError`."""
    selected = selected_components(graph.spec.components)
    roles = role_names(selected)
    sources = {
        s.spec["name"]: s for s in graph_sources(graph, generate_dcds(graph, live=live, env=env))
    }
    rendered_roles = []
    for component in selected:
        source = sources[component.name]
        leader, worker = leader_worker_templates(source, env=env)
        rendered_roles.append(
            {
                "name": roles[component.name],
                "spec": {
                    "replicas": 0 if gated else component.effective_replicas,
                    "startupPolicy": "LeaderCreated",
                    "rolloutStrategy": rollout_strategy(),
                    "networkConfig": network_config(),
                    "leaderWorkerTemplate": {
                        "size": source.node_count,
                        "restartPolicy": "RecreateGroupOnPodRestart",
                        "leaderTemplate": leader,
                        "workerTemplate": worker,
                    },
                },
            }
        )
    name = ds_name(graph.name)
    labels = {
        **(graph.spec.labels or {}),
        L.GRAPH_NAME: graph.name,
        L.SELECTOR: name,
    }
    annotations = {
        k: v for k, v in (graph.spec.annotations or {}).items() if k not in _NEVER_ANNOTATIONS
    }
    rendered = build(
        manager=ds_manager.MANAGER.name,
        api_version=API_VERSION,
        kind=KIND,
        name=name,
        namespace=graph_namespace(graph),
        labels=labels,
        annotations=annotations,
        owner=graph_owner(graph),
        spec={"roles": rendered_roles},
    )
    return DsRender(rendered=rendered, roles=roles)


def _canonical(value: Any) -> Any:
    """Keys sorted later by orjson; ``null``, ``{}`` and ``[]`` removed recursively."""
    if isinstance(value, Mapping):
        out = {k: _canonical(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        return [v for v in items if v is not None and v != {} and v != []]
    return value


def template_hash(roles: Sequence[Mapping[str, Any]]) -> str:
    """``F``: 16 hex chars of sha256 over the canonical ``[{name, leaderWorkerTemplate}]``.

    ``roles`` are the DS roles as the server returns them from a dry run (CRD defaults in).
    """
    material = [
        {
            "name": role.get("name"),
            "leaderWorkerTemplate": (role.get("spec") or {}).get("leaderWorkerTemplate"),
        }
        for role in roles
    ]
    data = orjson.dumps(_canonical(material), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()[:16]


def with_template_hash(rendered: Rendered, value: str) -> Rendered:
    """A copy whose every role carries ``nvidia.com/dynamo-ds-template-hash: F`` in metadata."""
    body = rendered.manifest()
    for role in body["spec"]["roles"]:
        role["metadata"] = {"annotations": {TEMPLATE_HASH: value}}
    return Rendered(
        manager=rendered.manager,
        api_version=rendered.api_version,
        kind=rendered.kind,
        name=rendered.name,
        namespace=rendered.namespace,
        body=body,
        owner=rendered.owner,
        shared=rendered.shared,
    )


def service_selector(ds: str, role: str, revision: str | None) -> dict[str, str]:
    """``S(R)``: one DS revision's leaders of a role; without the revision key while unknown."""
    selector = {NAME_LABEL: ds, ROLE_LABEL: role}
    if revision:
        selector[REVISION_LABEL] = revision
    selector[L.ROLE] = "leader"
    return selector


def pending_selector(live: Mapping[str, str], *, target: Mapping[str, str]) -> dict[str, str]:
    """What a selected component's Service selects while the DS is not ready.

    The live selector, except one that pins another revision of the same DS role: that one
    selects every revision of the role until the target revision is ready (then ``target``).
    The DS controller drains the old revision before the DS counts as ready, so keeping the old
    pin would leave the Service without endpoints in between (docs/ds-rollout-services.md).
    """
    role_wide = {k: v for k, v in target.items() if k != REVISION_LABEL}
    pinned = live.get(REVISION_LABEL)
    unpinned = {k: v for k, v in live.items() if k != REVISION_LABEL}
    if pinned is not None and pinned != target.get(REVISION_LABEL) and unpinned == role_wide:
        return role_wide
    return dict(live)


def render_ds_graph(graph: DynamoGraphDeployment, *, env: Environment) -> list[Rendered]:
    """Every object the DS program applies for a new graph, offline (``syncagent render``).

    Offline there is no dry run, so ``F`` is hashed over the raw rendering (the agent hashes
    the server-defaulted templates); selected Services have no revision key yet (§5.1).
    """
    out = render_disaggregated_set(graph, env=env)
    ds = with_template_hash(out.rendered, template_hash(out.rendered.body["spec"]["roles"]))
    owner = graph_owner(graph)
    dcds = generate_dcds(graph, env=env)
    sources = graph_sources(graph, dcds)
    objects = graph_shared_objects(graph, sources, env=env)
    objects.append(ds)
    models: dict[str, Rendered] = {}
    for dcd, source in zip(dcds, sources, strict=True):
        component = dcd.body["spec"]["name"]
        if component in out.roles:
            if wants_component_service(source, env):
                selector = service_selector(ds.name, out.roles[component], None)
                objects.append(
                    component_service(
                        source,
                        env=env,
                        owner=owner,
                        selector=selector,
                    )
                )
            if source.model and source.model not in models:
                models[source.model] = model_service(
                    source.model, namespace=source.namespace, owner=owner
                )
            continue
        objects.append(dcd)
        rendered = render_component(source, env=env, lws=True)
        objects += [rendered.workload, *([rendered.service] if rendered.service else [])]
        if rendered.model_service:  # the last DCD controls it, as in render_graph
            models[rendered.model_service.name] = rendered.model_service
    return objects + list(models.values())
