"""The chart's RBAC: everything the agent does, nothing more, and Secrets only where watched."""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.cli.pathways import PROGRAMS
from syncagent.render.identity import RULES as DISCOVERY_ROLE_RULES
from syncagent.runtime.leader import LeaseConfig
from tests.chart.support.render import (
    RELEASE_NS,
    Rules,
    cluster_wide_rules,
    container,
    namespace_rules,
    objects,
    one,
    render,
)

SA = "r1-syncagent"
# Which verbs the chart grants is proven by a recorded run of the agent under the chart's
# ServiceAccount (tests/cluster/test_helm_rights.py); these tests check the chart's shape.
READ = ("list", "watch")
WRITE = ("get", *READ, "create", "patch", "delete")

# Every kind the agent reads or writes, with its resource: from the registry, no table.
KIND_RESOURCES = {k.kind: (k.group, k.plural) for k in PROGRAMS.store_kinds()}


def _granted(rules: Rules) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules.rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


# Secure metrics (on by default): who sent a scrape, and may they get /metrics. Reviews are
# cluster-scoped and write nothing.
METRICS_AUTH = {
    ("authentication.k8s.io", "tokenreviews", "create"),
    ("authorization.k8s.io", "subjectaccessreviews", "create"),
}


def test_with_watch_namespaces_nothing_is_written_cluster_wide() -> None:
    """Issue 14 item 7: a namespaced install binds its rights in the watched namespaces only;
    cluster-wide it may only ask for the reviews of secure metrics and of history reads."""
    docs = render({"watchNamespaces": ["team-a"]})
    bindings = [b["metadata"]["name"] for b in objects(docs, "ClusterRoleBinding")]
    assert sorted(bindings) == ["r1-syncagent-history-auth", "r1-syncagent-metrics-auth"]
    cluster = cluster_wide_rules(docs, subject=SA)
    assert _granted(cluster) == METRICS_AUTH
    rules = namespace_rules(docs, "team-a", subject=SA)
    elsewhere = namespace_rules(docs, "elsewhere", subject=SA)
    for group, resource in (("", "services"), ("apps", "deployments"), ("", "serviceaccounts")):
        assert rules.allows(group, resource, "create")
        assert not elsewhere.allows(group, resource, "create")


def test_every_field_manager_kind_can_be_applied() -> None:
    rules = cluster_wide_rules(render(), subject=SA)
    for manager in PROGRAMS.field_managers():
        for kind in manager.kinds:
            group, resource = KIND_RESOURCES[kind]
            if manager.subresource:
                resource = f"{resource}/{manager.subresource}"
            verb = "patch"  # SSA and JSON merge patches are both `patch`
            assert rules.allows(group, resource, verb), f"{manager.name}: {verb} {resource}"


def test_owner_references_with_block_owner_deletion_are_allowed() -> None:
    # OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs update on owner/finalizers.
    rules = cluster_wide_rules(render(), subject=SA)
    for owner in ("dynamographdeployments", "dynamocomponentdeployments"):
        assert rules.allows("nvidia.com", f"{owner}/finalizers", "update")


@pytest.mark.parametrize("watch", [[], ["a"]])
def test_secure_metrics_grant_the_reviews_only_when_on(watch: list[str]) -> None:
    on = render({"watchNamespaces": watch})
    assert _granted(cluster_wide_rules(on, subject=SA)) >= METRICS_AUTH
    reader = one(on, "ClusterRole", "r1-syncagent-metrics-reader")
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    history_off = {"enabled": False, "port": 8082}
    off = render({"watchNamespaces": watch, "metrics": {"secure": False}, "history": history_off})
    assert _granted(cluster_wide_rules(off, subject=SA)) & METRICS_AUTH == set()
    names = {d["metadata"]["name"] for d in off}
    assert {"r1-syncagent-metrics-auth", "r1-syncagent-metrics-reader"} & names == set()


def test_no_wildcards_and_no_escalation_verbs() -> None:
    roles = [*objects(render(), "ClusterRole"), *objects(render(), "Role")]
    for role in roles:
        if role["metadata"]["name"] == "r1-syncagent-metrics-reader":
            continue  # for the scraper, not the agent: get /metrics (the test above)
        for rule in role["rules"]:
            for key in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule[key], f"{role['metadata']['name']}: wildcard in {key}"
            assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"])
            assert "nonResourceURLs" not in rule


def test_secrets_are_never_written() -> None:
    for role in [*objects(render(), "ClusterRole"), *objects(render(), "Role")]:
        rules = Rules.of(role)
        for verb in ("create", "update", "patch", "delete"):
            assert not rules.allows("", "secrets", verb)


def test_without_watch_namespaces_secrets_are_readable_cluster_wide() -> None:
    rules = cluster_wide_rules(render(), subject=SA)
    for verb in READ:
        assert rules.allows("", "secrets", verb)
    # The agent lists and watches pull secrets; it never reads one Secret by name.
    assert not rules.allows("", "secrets", "get")
    # Besides its Lease, the front proxy's trust in kube-system, for the history
    # (test_helm_history.py).
    names = sorted(b["metadata"]["name"] for b in objects(render(), "RoleBinding"))
    assert names == ["r1-syncagent-history-auth-reader", "r1-syncagent-leader-election"]


def test_with_watch_namespaces_no_cluster_wide_secrets_rule() -> None:
    docs = render({"watchNamespaces": ["team-a", "team-b"]})
    for verb in READ:
        assert not cluster_wide_rules(docs, subject=SA).allows("", "secrets", verb)
    for namespace in ("team-a", "team-b"):
        rules = namespace_rules(docs, namespace, subject=SA)
        assert all(rules.allows("", "secrets", verb) for verb in READ), namespace
    assert not namespace_rules(docs, "elsewhere", subject=SA).allows("", "secrets", "get")
    bindings = {
        (b["metadata"]["namespace"], b["metadata"]["name"]) for b in objects(docs, "RoleBinding")
    }
    assert ("team-a", "r1-syncagent-namespaced") in bindings
    assert ("team-b", "r1-syncagent-namespaced") in bindings


@pytest.mark.parametrize("watch", [[], ["team-a"]])
def test_agent_holds_every_right_of_the_discovery_role_it_creates(watch: list[str]) -> None:
    # Kubernetes refuses to create a Role granting rights its creator lacks (no escalate).
    docs = render({"watchNamespaces": watch})
    namespace = watch[0] if watch else "any-namespace"
    cluster, local = (
        cluster_wide_rules(docs, subject=SA),
        namespace_rules(docs, namespace, subject=SA),
    )
    for rule in DISCOVERY_ROLE_RULES:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    held = cluster.allows(group, resource, verb) or local.allows(
                        group, resource, verb
                    )
                    assert held, f"{verb} {group}/{resource} in {namespace}"


def test_wait_leader_config_maps_are_written_only_in_watched_namespaces() -> None:
    docs = render({"watchNamespaces": ["team-a"]})
    assert not cluster_wide_rules(docs, subject=SA).allows("", "configmaps", "create")
    rules = namespace_rules(docs, "team-a", subject=SA)
    assert all(rules.allows("", "configmaps", verb) for verb in WRITE)
    assert not namespace_rules(docs, "elsewhere", subject=SA).allows("", "configmaps", "get")


def test_with_watch_namespaces_discovery_rights_are_not_cluster_wide() -> None:
    docs = render({"watchNamespaces": ["team-a"]})
    rules = cluster_wide_rules(docs, subject=SA)
    assert not rules.allows("", "pods", "list")
    assert not rules.allows("nvidia.com", "dynamoworkermetadatas", "create")


def test_leader_election_role_covers_only_the_agents_lease() -> None:
    docs = render()
    role = one(docs, "Role", "r1-syncagent-leader-election")
    assert role["metadata"]["namespace"] == RELEASE_NS
    rules = Rules.of(role)
    from syncagent.cli.main import build_parser  # the agent pulls in the whole controller

    # The chart's default Lease is the agent's default one.
    lease = LeaseConfig.__dataclass_fields__["name"].default
    assert build_parser(PROGRAMS).parse_args(["run"]).leader_election_id == lease
    for verb in ("get", "update"):
        assert rules.allows("coordination.k8s.io", "leases", verb, name=lease)
        assert not rules.allows("coordination.k8s.io", "leases", verb, name="someone-else")
    assert not rules.allows("coordination.k8s.io", "leases", "patch", name=lease)
    assert rules.allows("coordination.k8s.io", "leases", "create")
    binding = one(docs, "RoleBinding", "r1-syncagent-leader-election")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": SA, "namespace": RELEASE_NS}]
    assert not cluster_wide_rules(docs, subject=SA).allows("coordination.k8s.io", "leases", "get")


def test_leader_election_role_follows_the_lease_values() -> None:
    docs = render({"leaderElection": {"enabled": True, "namespace": "leases", "leaseName": "s1"}})
    role = one(docs, "Role", "r1-syncagent-leader-election")
    assert role["metadata"]["namespace"] == "leases"
    assert Rules.of(role).allows("coordination.k8s.io", "leases", "update", name="s1")
    assert not Rules.of(role).allows("coordination.k8s.io", "leases", "update", name="syncagent")
    assert one(docs, "RoleBinding", "r1-syncagent-leader-election")["metadata"]["namespace"] == (
        "leases"
    )
    off = render({"leaderElection": {"enabled": False}})
    assert "r1-syncagent-leader-election" not in {
        r["metadata"]["name"] for r in objects(off, "Role")
    }


def test_bindings_name_the_chart_service_account() -> None:
    docs = render({"watchNamespaces": ["team-a"]})
    account = one(docs, "ServiceAccount")["metadata"]
    assert (account["name"], account["namespace"]) == (SA, RELEASE_NS)
    for binding in [*objects(docs, "ClusterRoleBinding"), *objects(docs, "RoleBinding")]:
        subjects: list[dict[str, Any]] = binding["subjects"]
        assert subjects == [{"kind": "ServiceAccount", "name": SA, "namespace": RELEASE_NS}]


def test_rbac_and_service_account_can_be_left_to_the_user() -> None:
    docs = render({"rbac": {"create": False}, "serviceAccount": {"create": False, "name": "mine"}})
    kinds = {d["kind"] for d in docs}
    assert kinds.isdisjoint({"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"})
    assert "ServiceAccount" not in kinds
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "mine"


def test_cluster_scoped_names_carry_the_release() -> None:
    # Two releases (say, two shards) never fight over one ClusterRole.
    first = {d["metadata"]["name"] for d in objects(render(release="shard-a"), "ClusterRole")}
    second = {d["metadata"]["name"] for d in objects(render(release="shard-b"), "ClusterRole")}
    assert first
    assert first.isdisjoint(second)


def _rules_in(namespace: str) -> list[Rules]:
    docs = render({"watchNamespaces": [namespace]})
    return [
        cluster_wide_rules(docs, subject=SA),
        namespace_rules(docs, namespace, subject=SA),
    ]


@pytest.mark.parametrize(("group", "resource"), sorted(PROGRAMS.rbac()))
def test_the_chart_grants_what_the_program_registry_watches_and_writes(
    group: str, resource: str
) -> None:
    # The registry (every program's owned and watched kinds, and the reconcilers' common
    # watches) is the one list; the chart's rules are written by hand, so compare the two.
    rules = _rules_in("a")
    for verb in sorted(PROGRAMS.rbac()[group, resource]):
        assert any(r.allows(group, resource, verb) for r in rules), f"{verb} {group}/{resource}"


def test_every_object_resource_the_chart_grants_is_in_the_program_registry() -> None:
    # Subresources, events, CRDs (capability discovery) and the rights each graph's discovery
    # Role hands out (granting needs holding them) are not kinds a program reads.
    granted = {(g, r) for g, r, _ in _granted(cluster_wide_rules(render(), subject=SA))}
    handed_out = {(g, r) for g, r, _ in _granted(Rules(tuple(DISCOVERY_ROLE_RULES)))}
    objects_only = {
        (g, r)
        for g, r in granted - handed_out
        if "/" not in r and r not in ("events", "customresourcedefinitions")
    }
    objects_only -= {(g, r) for g, r, _ in METRICS_AUTH}  # reviews, not objects
    assert objects_only - set(PROGRAMS.rbac()) == set()


@pytest.mark.parametrize("watch", [[], ["team-a", "team-b"]])
def test_the_create_only_check_may_dry_run_its_config_map_where_the_agent_puts_it(
    watch: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The start-up check (ssa/createcheck.py) dry-runs a create-only apply of a ConfigMap:
    # create and patch, in the namespace the agent's own flags pick.
    from syncagent.cli.main import build_parser
    from syncagent.cli.run.agent import _check_namespace
    from syncagent.cli.run.settings import agent_settings

    docs = render({"watchNamespaces": watch})
    env = {e["name"]: e.get("value") for e in container(docs).get("env") or ()}
    monkeypatch.setenv("POD_NAMESPACE", env.get("POD_NAMESPACE") or RELEASE_NS)
    args = build_parser(PROGRAMS).parse_args(container(docs)["args"])
    namespace = _check_namespace(agent_settings(args))
    assert namespace == (watch[0] if watch else RELEASE_NS)
    rules = namespace_rules(docs, namespace, subject=SA)
    cluster = cluster_wide_rules(docs, subject=SA)
    for verb in ("create", "patch"):
        assert rules.allows("", "configmaps", verb) or cluster.allows("", "configmaps", verb)
