"""The agent guard's data (``syncagent.cli.agent_guard``): what the chart's
``_agent_guard.tpl`` carries, from the pathways and the discovery identity."""

from __future__ import annotations

import json

import pytest

from syncagent.cli import agent_guard
from syncagent.cli.pathways import PROGRAMS
from syncagent.kube import kinds
from syncagent.kube.objects import OwnerRef
from syncagent.render.identity import RULES, discovery_identity
from tests.support.toypathway import TOY
from tests.support.toypathway.agent import PROGRAMS as WITH_TOY


def test_targets_name_group_resource_and_subresource() -> None:
    assert agent_guard.target(kinds.DEPLOYMENT) == "apps/deployments"
    assert agent_guard.target(kinds.SERVICE) == "/services"
    assert agent_guard.target(kinds.DGD, "status") == "nvidia.com/dynamographdeployments/status"


def test_the_identity_names_are_what_the_renderer_names() -> None:
    names = agent_guard.identity_names()
    owner = OwnerRef(kinds.DGD.api_version, kinds.DGD.kind, "llm", "u1")
    account, role, binding = discovery_identity("llm", namespace="ns", owner=owner)
    assert account.name == "llm" + names["account"]
    assert role.name == account.name + names["role"]
    assert binding.name == account.name + names["binding"]
    assert binding.body["subjects"] == [
        {"kind": "ServiceAccount", "name": account.name, "namespace": "ns"}
    ]
    assert binding.body["roleRef"]["name"] == role.name


def test_the_role_rules_are_the_discovery_roles() -> None:
    data = agent_guard.guard_data(PROGRAMS)
    assert data["roleRules"] == RULES
    assert all(set(rule) == {"apiGroups", "resources", "verbs"} for rule in RULES)


def test_a_new_pathways_kind_reaches_the_guard() -> None:
    assert agent_guard.target(TOY) in agent_guard.guard_data(WITH_TOY)["applied"]
    assert agent_guard.target(TOY) not in agent_guard.guard_data(PROGRAMS)["applied"]


def test_the_template_defines_each_value_as_a_cel_literal() -> None:
    text = agent_guard.template(PROGRAMS, "{{- /* header */ -}}\n")
    for name, value in agent_guard.guard_data(PROGRAMS).items():
        body = text.split(f'{{{{- define "syncagent.guard.{name}" -}}}}\n')[1]
        assert json.loads(body.split("\n{{- end }}")[0]) == value


def test_names_that_do_not_extend_the_account_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(agent_guard, "discovery_role", lambda parent: f"role-{parent}")
    with pytest.raises(ValueError, match="do not extend"):
        agent_guard.identity_names()
