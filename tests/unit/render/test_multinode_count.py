"""One answer to "is this component multinode, on how many nodes" on every pathway.

Upstream's CRD declares ``multinode.nodeCount`` with ``default: 2`` (reference/crds), so a
``multinode: {}`` component runs on two nodes wherever it is read: routing, the LWS of its DCD,
the DisaggregatedSet roles and the Grove cliques. ``nodeCount: 1`` is single-node everywhere.
"""

from __future__ import annotations

import pytest

from syncagent.api import Component, is_multinode_component, node_count_of
from syncagent.programs.disaggregatedset import routing as ds_routing
from syncagent.programs.disaggregatedset.render import render_disaggregated_set, selected_components
from syncagent.programs.grove.render import clique_names, render_pod_clique_set
from syncagent.render import Environment, generate_dcds, leader_worker_set, source_of
from tests.support.graphs import frontend, typed, typed_components, worker
from tests.support.graphs import served_graph as graph

ENV = Environment()


def _component(multinode: dict | None, name: str = "decode") -> dict:
    c = worker(name, "decode", nodes=1)
    if multinode is not None:
        c["multinode"] = multinode
    return c


@pytest.mark.parametrize(
    ("multinode", "nodes"),
    [(None, 1), ({}, 2), ({"nodeCount": 1}, 1), ({"nodeCount": 4}, 4)],
)
def test_wire_form_answer_equals_the_model(multinode: dict | None, nodes: int) -> None:
    c = _component(multinode)
    model = Component.model_validate(c)
    assert node_count_of(c) == model.node_count == nodes
    assert is_multinode_component(c) is model.is_multinode is (nodes > 1)


def test_empty_multinode_is_two_nodes_on_every_pathway() -> None:
    components = [frontend(), _component({}, "decode"), _component({}, "prefill")]
    g = graph("x", components=components, backendFramework="vllm")
    assert [c["name"] for c in ds_routing.ds_candidates(components)] == ["decode", "prefill"]
    selected = selected_components(typed_components(components))
    assert [c.name for c in selected] == ["decode", "prefill"]
    dcd = next(d for d in generate_dcds(typed(g), env=ENV) if d.body["spec"]["name"] == "decode")
    source = source_of(dcd, graph="x")
    assert (source.node_count, source.multinode) == (2, True)
    lws = leader_worker_set(source, env=ENV).body
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    roles = render_disaggregated_set(typed(g), env=ENV).rendered.body["spec"]["roles"]
    assert [r["spec"]["leaderWorkerTemplate"]["size"] for r in roles] == [2, 2]
    assert clique_names(typed_components(components)) == [
        "frontend",
        "decode-ldr",
        "decode-wkr",
        "prefill-ldr",
        "prefill-wkr",
    ]
    cliques = render_pod_clique_set(typed(g), env=ENV).body["spec"]["template"]["cliques"]
    workers = {c["name"]: c["spec"]["replicas"] for c in cliques if c["name"].endswith("-wkr")}
    assert workers == {"decode-wkr": 1, "prefill-wkr": 1}


def test_node_count_one_is_single_node_on_every_pathway() -> None:
    components = [frontend(), _component({"nodeCount": 1})]
    g = graph("x", components=components, backendFramework="vllm")
    assert ds_routing.ds_candidates(components) == []
    assert selected_components(typed_components(components)) == []
    assert clique_names(typed_components(components)) == ["frontend", "decode"]
    dcd = next(d for d in generate_dcds(typed(g), env=ENV) if d.body["spec"]["name"] == "decode")
    assert source_of(dcd, graph="x").multinode is False
