"""Issue 26 items 4 and 5, rendered: the grace period, anti-affinity, PodDisruptionBudget,
NetworkPolicy and graph policy values (tests/cluster/test_helm_guards.py applies them)."""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.runtime.leader import LeaseConfig
from syncagent.runtime.manager import ManagerOptions
from tests.chart.support.render import objects, one, render, render_error

SHARDS = [{"name": "a", "selector": "s in (a)"}, {"name": "b", "selector": "s notin (a)"}]


def _pods(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d["spec"]["template"]["spec"] for d in objects(docs, "Deployment")]


def test_grace_period_outlasts_the_drain_and_the_lease_release() -> None:
    drain = ManagerOptions.__dataclass_fields__["shutdown_grace"].default
    release = LeaseConfig.__dataclass_fields__["retry_period"].default
    (pod,) = _pods(render())
    assert pod["terminationGracePeriodSeconds"] > drain + release
    assert "terminationGracePeriodSeconds" in render_error({"terminationGracePeriodSeconds": 30})


def test_no_guard_is_rendered_by_default() -> None:
    docs = render()
    for kind in ("PodDisruptionBudget", "NetworkPolicy", "ValidatingAdmissionPolicy"):
        # the agent guard and the adapted-replicas policy are on by default
        # (tests/chart/test_helm_agent_guard.py, test_helm_adapted_replicas.py)
        on = ("-guard", "-adapted-replicas")
        found = [d for d in objects(docs, kind) if not d["metadata"]["name"].endswith(on)]
        assert found == [], kind
    (pod,) = _pods(docs)
    assert "affinity" not in pod


@pytest.mark.parametrize(
    ("mode", "key"),
    [
        ("hard", "requiredDuringSchedulingIgnoredDuringExecution"),
        ("soft", "preferredDuringSchedulingIgnoredDuringExecution"),
    ],
)
def test_anti_affinity_keeps_each_deployments_replicas_apart(mode: str, key: str) -> None:
    docs = render({"podAntiAffinity": mode, "shards": SHARDS})
    for deployment in objects(docs, "Deployment"):
        (term,) = deployment["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][key]
        term = term.get("podAffinityTerm", term)
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert term["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]


def test_explicit_affinity_wins_over_the_anti_affinity_value() -> None:
    mine = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]
            }
        }
    }
    (pod,) = _pods(render({"podAntiAffinity": "hard", "affinity": mine}))
    assert pod["affinity"] == mine


def test_one_disruption_budget_per_agent_deployment() -> None:
    docs = render({"podDisruptionBudget": {"enabled": True, "maxUnavailable": 1}, "shards": SHARDS})
    budgets = {b["metadata"]["name"]: b["spec"] for b in objects(docs, "PodDisruptionBudget")}
    deployments = {d["metadata"]["name"]: d["spec"] for d in objects(docs, "Deployment")}
    assert set(budgets) == set(deployments) == {"r1-syncagent-a", "r1-syncagent-b"}
    for name, spec in budgets.items():
        assert spec["selector"] == deployments[name]["selector"]
        assert spec["maxUnavailable"] == 1
    # maxUnavailable 0 with one replica would block every node drain.
    assert "maxUnavailable" in render_error(
        {"podDisruptionBudget": {"enabled": True, "maxUnavailable": 0}}
    )


def test_network_policy_opens_the_agents_ports_and_the_api_server_only() -> None:
    scraper = [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}]
    values = {"networkPolicy": {"enabled": True, "apiServerPorts": [6443], "metricsFrom": scraper}}
    docs = render(values)
    policy = one(docs, "NetworkPolicy")["spec"]
    assert (
        policy["podSelector"]["matchLabels"]
        == one(docs, "Deployment")["spec"]["selector"]["matchLabels"]
    )
    ports = {
        p["name"]: p["containerPort"]
        for p in one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["ports"]
    }
    metrics, history, health = policy["ingress"]
    assert history == {"ports": [{"protocol": "TCP", "port": ports["history"]}]}  # from anywhere
    assert metrics == {"ports": [{"protocol": "TCP", "port": ports["metrics"]}], "from": scraper}
    assert health == {"ports": [{"protocol": "TCP", "port": ports["health"]}]}
    assert policy["egress"] == [{"ports": [{"protocol": "TCP", "port": 6443}]}]


@pytest.mark.parametrize("watch", [[], ["team-a", "team-b"]])
def test_graph_policy_binds_where_the_release_reconciles(watch: list[str]) -> None:
    docs = render({"graphPolicy": {"enabled": True}, "watchNamespaces": watch})
    policy = one(docs, "ValidatingAdmissionPolicy", "r1-syncagent-graph-policy")
    binding = one(docs, "ValidatingAdmissionPolicyBinding", "r1-syncagent-graph-policy")
    assert (
        binding["spec"]["policyName"] == policy["metadata"]["name"] == "r1-syncagent-graph-policy"
    )
    assert binding["spec"]["validationActions"] == ["Deny"]
    (rule,) = policy["spec"]["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["dynamographdeployments", "dynamocomponentdeployments"]
    assert rule["operations"] == ["CREATE", "UPDATE"]
    if watch:
        (term,) = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
        assert term == {"key": "kubernetes.io/metadata.name", "operator": "In", "values": watch}
    else:
        assert "matchResources" not in binding["spec"]
