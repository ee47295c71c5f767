"""Adding a program = one package plus one registry line (issues 12 and 28 item 1).

The test-only toy pathway (``tests/support/toypathway``) plugs into the registry beside the
built-in ones; routing, recorded-pathway detection, stale cleanup, discovery lists, watches,
store kinds, RBAC verbs, field managers, the CRD enum and ``render``'s help follow from its
declaration alone (``tests/cluster/test_toy_pathway.py`` runs it on the API server).
"""

from __future__ import annotations

from typing import Any

from syncagent.cli.pathways import PROGRAMS
from syncagent.kube.kinds import DCD, DGD, POD_CLIQUE_SET
from syncagent.programs import migration
from syncagent.programs.capabilities import offline
from syncagent.programs.graph import graph_context
from syncagent.programs.grove.routing import PATHWAY as GROVE
from syncagent.programs.program import CONTROLLER, GRAPH, Requeue, Route
from syncagent.programs.view import DictStore
from syncagent.render import Environment
from syncagent.rest.resource import Resource
from tests.support.graphs import typed
from tests.support.toypathway import MANAGER, OPT_IN, TOY
from tests.support.toypathway.agent import PROGRAMS as TOY_REGISTRY

# The fourth pathway's package and its one registry line (tests/support/toypathway).
REGISTRY = TOY_REGISTRY
CAPS = offline({}, declared=REGISTRY.capabilities())


def graph(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta = {"name": "g", "namespace": "ns", "uid": "u1", "annotations": annotations or {}}
    return {"apiVersion": DGD.api_version, "kind": DGD.kind, "metadata": meta, "spec": {}}


def child(kind: Resource, name: str, *, controller_uid: str = "u1") -> dict[str, Any]:
    ref = {"apiVersion": DGD.api_version, "kind": DGD.kind, "name": "g", "uid": controller_uid}
    meta = {"name": name, "namespace": "ns", "ownerReferences": [{**ref, "controller": True}]}
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta}


def route(annotations: dict[str, str]) -> Route:
    return Route(annotations, [], CAPS)


def test_routing_precedence_follows_the_registry_order() -> None:
    assert REGISTRY.select(route({OPT_IN: "true"})).pathway == "Toy"
    # without the opt-in the built-in precedence is untouched
    assert REGISTRY.select(route({})).pathway == GROVE
    assert PROGRAMS.select(route({OPT_IN: "true"})).pathway == GROVE


def test_a_pathway_records_its_own_annotation_beside_groves() -> None:
    annotations = {OPT_IN: "true", "nvidia.com/enable-grove": "false", "other": "x"}
    recorded = REGISTRY.select(route(annotations)).record(annotations)
    assert recorded.to_status() == {
        "pathway": "Toy",
        "groveAnnotation": "false",
        "annotations": {OPT_IN: "true"},
    }
    assert PROGRAMS.select(route(annotations)).record(annotations).annotations == {
        "nvidia.com/enable-grove": "false"
    }
    derived = REGISTRY.recorded_from_children(annotations, [TOY])
    assert derived is not None
    assert derived.annotations[OPT_IN] == "true"


def test_recorded_pathway_from_the_children_the_graph_controls() -> None:
    assert REGISTRY.recorded_from_children({}, [TOY]).pathway == "Toy"  # type: ignore[union-attr]
    assert REGISTRY.recorded_from_children({}, [TOY, POD_CLIQUE_SET]) is None
    assert PROGRAMS.recorded_from_children({}, [TOY]) is None


def test_stale_cleanup_of_other_pathways_includes_the_new_kind() -> None:
    store = DictStore(
        {
            TOY.kind: [child(TOY, "t"), child(TOY, "foreign", controller_uid="u2")],
            DCD.kind: [child(DCD, "d")],
        }
    )
    ctx = graph_context(
        graph(), CAPS, store=store, writer=None, discovery_backend="kubernetes", programs=REGISTRY
    )  # type: ignore[arg-type]
    names = [o["metadata"]["name"] for o in migration.other_pathways(ctx, GROVE)]
    assert names == ["t", "d"]
    assert migration.other_pathways(ctx, "Toy") == [child(DCD, "d")]
    # the graph controls a ToySet and a DCD: two families, no recorded pathway to derive
    assert ctx.recorded is None


def test_discovery_watches_store_kinds_and_rbac_follow_the_declaration() -> None:
    assert ("toy.example.com", "v1") in REGISTRY.group_versions()
    assert ("toy.example.com", "v1") not in PROGRAMS.group_versions()
    assert TOY in REGISTRY.store_kinds()
    assert REGISTRY.rbac()["toy.example.com", "toysets"] >= {"get", "list", "watch", "patch"}
    # the program watches follow the common ones, in precedence order: the toy's first, with
    # the graph its ToySet's controller reference names re-queued
    program_watches = REGISTRY.watched()[len(REGISTRY.common) :]
    assert program_watches[0].kind == TOY
    assert program_watches[0].requeues == (Requeue(GRAPH, CONTROLLER),)


def test_render_program_names_and_offline_render() -> None:
    assert REGISTRY.names[0] == "toy"
    rendered = REGISTRY.by_name("toy").functions.render(
        typed(graph()), env=Environment(), caps=CAPS
    )
    assert [r.kind for r in rendered] == [TOY.kind]


def test_the_built_in_registry_discovers_what_routing_md_names() -> None:
    # routing.md §1: Grove, LeaderWorkerSet and DisaggregatedSet are discovered, and the
    # checkpoint API (v1alpha1) may be absent; core, apps, RBAC and our v1beta1 are assumed.
    # a new pathway adds its own group/versions: the shipped ones are a subset
    discovered = set(PROGRAMS.group_versions())
    assert {
        ("grove.io", "v1alpha1"),
        ("leaderworkerset.x-k8s.io", "v1"),
        ("disaggregatedset.x-k8s.io", "v1"),
        ("nvidia.com", "v1alpha1"),
    } <= discovered
    assumed = {("", "v1"), ("apps", "v1"), ("rbac.authorization.k8s.io", "v1")}
    assert discovered.isdisjoint(assumed | {("nvidia.com", "v1beta1")})


def test_what_a_reconcile_reads_decides_which_unsynced_watches_hold_it_back() -> None:
    """A graph reads the common caches, every pathway's root and its own program's kinds; a
    component reads the common caches only (docs/runtime.md §3)."""
    common = {w.kind.plural for w in PROGRAMS.common}
    # every pathway's workload root: cleanup and cutover look for them whatever the route
    roots = {p.owns[0].plural for p in PROGRAMS.programs}
    assert {"dynamocomponentdeployments", "disaggregatedsets", "podcliquesets"} <= roots
    assert PROGRAMS.resources_read(None) == common
    for program in PROGRAMS.programs:
        own = {w.kind.plural for w in program.watches}
        assert PROGRAMS.resources_read(program.pathway) == common | roots | own, program.pathway
    assert {"podcliques", "podcliquescalinggroups"} <= PROGRAMS.resources_read("Grove")
    assert "podcliques" not in PROGRAMS.resources_read("DisaggregatedSet")


def test_field_managers_and_help_follow_the_declaration() -> None:
    managers = {m.name: m for m in REGISTRY.field_managers()}
    assert managers[MANAGER.name] == MANAGER
    assert MANAGER.name not in {m.name for m in PROGRAMS.field_managers()}
    # every program's workload kinds are the ownership manager's
    ownership = managers["syncagent/ownership"]
    assert {k.kind for k in REGISTRY.owned_kinds()} <= set(ownership.kinds)
    assert REGISTRY.pathways[0] == "Toy"
    assert REGISTRY.summary().startswith("Toy (a ToySet, tests only), Grove")
    assert REGISTRY.pathway_rules()["Toy"][0].resource == "toysets"


def test_every_written_kind_has_a_field_manager() -> None:
    """What a program writes (its written watches) some declared manager writes: a kind a
    pathway adds without a manager fails here."""
    for registry in (PROGRAMS, REGISTRY):
        written = {w.kind.kind for w in registry.watched() if w.write}
        declared = {k for m in registry.field_managers() for k in m.kinds}
        assert written <= declared, written - declared


def test_the_agent_guard_lets_the_agent_write_what_the_rbac_lets_it_create() -> None:
    """The chart's agent guard and its RBAC come from one declaration: every kind the agent
    creates is one the guard admits, with the toy's kind once it is registered."""
    for registry in (PROGRAMS, REGISTRY):
        created = {k for k, verbs in registry.rbac().items() if "create" in verbs}
        created |= {
            (r.group, r.resource)
            for rules in registry.pathway_rules().values()
            for r in rules
            if "create" in r.verbs
        }
        assert {(k.group, k.plural) for k in registry.written()} == created
    assert TOY in REGISTRY.written()
    assert TOY not in PROGRAMS.written()


def test_the_subresources_the_agent_patches_are_its_managers() -> None:
    written = {(k.plural, sub) for k, sub in PROGRAMS.subresource_writes()}
    assert written == {
        ("dynamographdeployments", "status"),
        ("dynamocomponentdeployments", "status"),
        ("dynamographdeploymentscalingadapters", "status"),
        ("podcliques", "scale"),
        ("podcliquescalinggroups", "scale"),
    }
    # each is one of the chart's patch rules (the common status rules are the chart's own)
    pathway = {(r.group, r.resource) for rs in PROGRAMS.pathway_rules().values() for r in rs}
    assert ("grove.io", "podcliques/scale") in pathway


def test_the_takeover_policy_covers_each_pathway_s_content_kinds() -> None:
    """A pathway's content manager brings its kinds into the upstream takeover (the toy's
    ToySet too); a subresource manager (Grove's scale patches) brings none."""
    policy_kinds = {k for r in REGISTRY.takeover_policy.rules for k in r.kinds or ()}
    assert {TOY.kind, POD_CLIQUE_SET.kind, "DisaggregatedSet"} <= policy_kinds
    assert not {"PodClique", "PodCliqueScalingGroup"} & policy_kinds
    assert TOY.kind not in {k for r in PROGRAMS.takeover_policy.rules for k in r.kinds or ()}


def test_the_takeover_policy_is_built_once_per_registry() -> None:
    assert REGISTRY.takeover_policy is REGISTRY.takeover_policy
