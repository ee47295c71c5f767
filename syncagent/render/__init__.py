"""Pure rendering: from a graph (the parsed :class:`~syncagent.api.DynamoGraphDeployment`) to
typed apply models. No I/O. Per-component renderers read a component's wire form (a DCD
``spec`` is a copy of it, docs/rendering.md §1; :meth:`~syncagent.api.Component.wire`).

Public names:

- :class:`Rendered` (``manager, api_version, kind, name, namespace, body, owner, shared``),
  :class:`OwnerRef`, :class:`RenderError` (``message``, ``reason``), ``PLACEHOLDER_UID``.
- Inputs: :class:`Environment` (namespace facts: discovery backend, pull Secrets, labelled
  ServiceAccounts, checkpoint readiness), :class:`PullSecret`, :class:`ComponentSource` (one DCD
  as the workload renderer sees it), :class:`GraphLive` (live values DCD generation keeps).
- DGD -> DCD: :func:`generate_dcds`, :func:`generate_dcd`, :func:`detect_backend`,
  :func:`source_of` (from a rendered DCD), :func:`source_of_object` (from a live DCD),
  :func:`source_for_component` (a graph's component, for the DisaggregatedSet pathway),
  :func:`graph_sources` (every generated DCD of a graph, with the graph's origin version),
  :func:`origin_version`, :func:`graph_worker_hash` (the worker generation upstream recorded
  on a graph, which the Component pathway's worker names carry) and :func:`component_dcd_name`.
- Multinode launch (per backend, per deployer): :mod:`syncagent.render.multinode`.
- Pods and workloads: :func:`pod_template`, :func:`leader_worker_templates` (the one source of
  leader/worker templates, shared with the DisaggregatedSet pathway), :func:`deployment`,
  :func:`leader_worker_set`.
- Services and identity: :func:`component_service`, :func:`component_selector`,
  :func:`model_service`, :func:`discovery_identity`.
- Whole programs: :func:`render_component` (one DCD), :func:`render_graph` (Component pathway),
  :func:`render_standalone` (a DCD without a graph).
- Names: see :mod:`syncagent.render.naming` (``trunc_with_hash``, ``hash8``, ...).
"""

from syncagent.kube.objects import OwnerRef
from syncagent.render.component import (
    ComponentObjects,
    render_component,
    render_graph,
    render_standalone,
)
from syncagent.render.dcd import (
    GraphLive,
    component_dcd_name,
    detect_backend,
    generate_dcd,
    generate_dcds,
    graph_owner,
    graph_sources,
    graph_worker_hash,
    origin_version,
    source_for_component,
    source_of,
    source_of_object,
)
from syncagent.render.deployment import deployment
from syncagent.render.identity import discovery_identity
from syncagent.render.inputs import (
    NO_INFRASTRUCTURE,
    AgentAccount,
    ComponentSource,
    Environment,
    Infrastructure,
    PullSecret,
    is_legacy_worker,
    workload_type,
)
from syncagent.render.lws import leader_worker_set, leader_worker_templates
from syncagent.render.model import PLACEHOLDER_UID, Rendered, RenderError
from syncagent.render.podtemplate import pod_template
from syncagent.render.services import component_selector, component_service, model_service

__all__ = [
    "NO_INFRASTRUCTURE",
    "PLACEHOLDER_UID",
    "AgentAccount",
    "ComponentObjects",
    "ComponentSource",
    "Environment",
    "GraphLive",
    "Infrastructure",
    "OwnerRef",
    "PullSecret",
    "RenderError",
    "Rendered",
    "component_dcd_name",
    "component_selector",
    "component_service",
    "deployment",
    "detect_backend",
    "discovery_identity",
    "generate_dcd",
    "generate_dcds",
    "graph_owner",
    "graph_sources",
    "graph_worker_hash",
    "is_legacy_worker",
    "leader_worker_set",
    "leader_worker_templates",
    "model_service",
    "origin_version",
    "pod_template",
    "render_component",
    "render_graph",
    "render_standalone",
    "source_for_component",
    "source_of",
    "source_of_object",
    "workload_type",
]
