"""Issue 41 item 3, rendered: the agent guard (a ValidatingAdmissionPolicy on the agent's own
ServiceAccount) is on by default, binds that account alone, and carries what the pathways write
(tests/cluster/test_helm_agent_guard.py proves on a real API server what it refuses)."""

from __future__ import annotations

from typing import Any

from syncagent.cli.agent_guard import guard_data
from syncagent.cli.pathways import PROGRAMS
from tests.chart.support.render import objects, one, render, render_error

NAME = "r1-syncagent-agent-guard"
SHARDS = [{"name": "a", "selector": "s in (a)"}, {"name": "b", "selector": "s notin (a)"}]


def _guard(values: dict[str, Any] | None = None) -> dict[str, Any]:
    return one(render(values), "ValidatingAdmissionPolicy", NAME)["spec"]


def _variable(spec: dict[str, Any], name: str) -> str:
    (expression,) = [v["expression"] for v in spec["variables"] if v["name"] == name]
    return str(expression)


def _validations(spec: dict[str, Any]) -> str:
    return "\n".join(v["expression"] for v in spec["validations"])


def test_the_guard_is_on_by_default_and_binds_every_namespace() -> None:
    docs = render()
    spec = one(docs, "ValidatingAdmissionPolicy", NAME)["spec"]
    binding = one(docs, "ValidatingAdmissionPolicyBinding", NAME)["spec"]
    assert binding["policyName"] == NAME
    assert binding["validationActions"] == ["Deny"]
    assert "matchResources" not in binding  # a stolen token is not bound to watched namespaces
    assert spec["failurePolicy"] == "Fail"
    (rule,) = spec["matchConstraints"]["resourceRules"]
    assert rule["operations"] == ["CREATE", "UPDATE", "DELETE"]
    assert rule["resources"] == ["*/*"]


def test_the_guard_matches_the_agents_service_account_only() -> None:
    (condition,) = _guard()["matchConditions"]
    user = "system:serviceaccount:syncagent-system:r1-syncagent"
    assert condition["expression"] == f'request.userInfo.username == "{user}"'
    (named,) = _guard({"serviceAccount": {"create": False, "name": "robot"}})["matchConditions"]
    assert "system:serviceaccount:syncagent-system:robot" in named["expression"]


def test_guard_enabled_false_renders_no_guard() -> None:
    docs = render({"guard": {"enabled": False}})
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        assert [d for d in objects(docs, kind) if d["metadata"]["name"] == NAME] == [], kind
    assert "guard" in render_error({"guard": {"enabled": False, "mode": "audit"}})


def test_the_guard_carries_what_the_pathways_write() -> None:
    spec = _guard()
    data = guard_data(PROGRAMS)
    applied = _variable(spec, "applied")
    for kind in PROGRAMS.written():
        assert f'"{kind.group}/{kind.plural}"' in applied, kind
    for kind, subresource in PROGRAMS.subresource_writes():
        assert f'"{kind.group}/{kind.plural}/{subresource}"' in _validations(spec)
    assert '"account": "-k8s-service-discovery"' in _variable(spec, "names")
    assert '"dynamoworkermetadatas"' in _validations(spec)
    assert data["controllers"] == ["DynamoGraphDeployment", "DynamoComponentDeployment"]


def test_cluster_wide_the_system_and_release_namespaces_are_left_out() -> None:
    reconciled = _variable(_guard(), "reconciled")
    for ns in ("kube-system", "kube-public", "kube-node-lease", "syncagent-system"):
        assert f'"{ns}"' in reconciled, ns
    assert "!(variables.ns in" in reconciled


def test_namespaced_only_the_watched_namespaces_are_reconciled() -> None:
    reconciled = _variable(_guard({"watchNamespaces": ["team-a", "kube-system"]}), "reconciled")
    assert reconciled == 'variables.ns in ["team-a","kube-system"]'


def test_each_shards_lease_and_the_lease_namespace_are_allowed() -> None:
    spec = _guard({"shards": SHARDS, "leaderElection": {"namespace": "leases"}})
    text = _validations(spec)
    assert 'variables.name in ["syncagent-a", "syncagent-b"]' in text
    assert 'variables.ns == "leases"' in text
