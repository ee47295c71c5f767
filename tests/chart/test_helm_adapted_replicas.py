"""The adapted-replicas policy, rendered: on by default, refusing updates of graphs by everyone
but the agent's ServiceAccount and the planner's (tests/cluster/test_adapted_replicas_policy.py
proves on a real API server what it refuses)."""

from __future__ import annotations

from tests.chart.support.render import objects, one, render

NAME = "r1-syncagent-adapted-replicas"
AGENT = "system:serviceaccount:syncagent-system:r1-syncagent"


def test_on_by_default_denying_updates_of_graphs() -> None:
    docs = render()
    spec = one(docs, "ValidatingAdmissionPolicy", NAME)["spec"]
    binding = one(docs, "ValidatingAdmissionPolicyBinding", NAME)["spec"]
    assert binding["policyName"] == NAME
    assert binding["validationActions"] == ["Deny"]
    assert spec["failurePolicy"] == "Fail"
    (rule,) = spec["matchConstraints"]["resourceRules"]
    assert (rule["apiGroups"], rule["resources"], rule["operations"]) == (
        ["nvidia.com"],
        ["dynamographdeployments"],
        ["UPDATE"],
    )


def test_the_agent_and_the_planner_are_not_matched() -> None:
    spec = one(render(), "ValidatingAdmissionPolicy", NAME)["spec"]
    (condition,) = spec["matchConditions"]
    assert f'request.userInfo.username != "{AGENT}"' in condition["expression"]
    assert "'planner-serviceaccount'" in condition["expression"]


def test_off_when_disabled() -> None:
    docs = render({"adaptedReplicas": {"enabled": False}})
    names = {d["metadata"]["name"] for d in objects(docs, "ValidatingAdmissionPolicy")}
    assert NAME not in names
