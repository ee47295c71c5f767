"""Issue 41 item 1, rendered: the graph policy's level and exceptions values
(tests/cluster/test_graph_policy.py tries them on a real API server)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from tests.chart.support.render import objects, one, render, render_error

CRD = Path(__file__).resolve().parents[2] / "crds" / "nvidia.com_dynamographdeployments.yaml"
# Pod Security's restricted level allows these volume sources (hostPath has its own rule).
ALLOWED = {"name", "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral"}
ALLOWED |= {"persistentVolumeClaim", "projected", "secret", "hostPath"}


def _policy(values: dict[str, Any]) -> dict[str, Any]:
    return one(
        render({"graphPolicy": {"enabled": True, **values}}),
        "ValidatingAdmissionPolicy",
        "r1-syncagent-graph-policy",
    )


def _expressions(policy: dict[str, Any]) -> str:
    return "\n".join(v["expression"] for v in policy["spec"]["validations"])


def _crd_volume_sources() -> set[str]:
    doc = yaml.safe_load(CRD.read_text())
    (served,) = [v for v in doc["spec"]["versions"] if v["served"]]
    spec = served["schema"]["openAPIV3Schema"]["properties"]["spec"]
    pod = spec["properties"]["components"]["items"]["properties"]["podTemplate"]
    return set(pod["properties"]["spec"]["properties"]["volumes"]["items"]["properties"])


def test_restricted_refuses_every_volume_source_but_the_allowed_ones() -> None:
    expressions = _expressions(_policy({"level": "restricted"}))
    (listed,) = re.findall(r"\[('awsElasticBlockStore'[^\]]*)\]", expressions)
    assert set(re.findall(r"'(\w+)'", listed)) == _crd_volume_sources() - ALLOWED


def test_baseline_has_none_of_restricteds_rules() -> None:
    expressions = _expressions(_policy({}))
    for field in ("allowPrivilegeEscalation", "runAsNonRoot", "awsElasticBlockStore"):
        assert field not in expressions


def test_exceptions_are_rendered_into_the_policys_variables() -> None:
    values = {"exceptions": {"capabilities": ["IPC_LOCK"], "hostPathPrefixes": ["/dev/shm/"]}}
    variables = {v["name"]: v["expression"] for v in _policy(values)["spec"]["variables"]}
    assert variables["capabilities"].endswith('+ ["IPC_LOCK"]')
    assert variables["hostPaths"] == '["/dev/shm"]'
    # The templates are chosen by the resource, never by the object's shape.
    assert "request.resource.resource" in variables["graph"]


def test_values_refuse_an_unknown_level_and_a_quote_in_a_prefix() -> None:
    assert "level" in render_error({"graphPolicy": {"enabled": True, "level": "privileged"}})
    bad = {"graphPolicy": {"enabled": True, "exceptions": {"hostPathPrefixes": ["/a'b"]}}}
    assert "hostPathPrefixes" in render_error(bad)


def test_every_agent_is_told_the_service_account_it_runs_as() -> None:
    shards = [{"name": "a", "selector": "s in (a)"}, {"name": "b", "selector": "s notin (a)"}]
    docs = render({"shards": shards}, namespace="sys")
    (account,) = [a["metadata"]["name"] for a in objects(docs, "ServiceAccount")]
    for deployment in objects(docs, "Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == account
        assert f"--service-account=sys/{account}" in pod["containers"][0]["args"]


def test_the_policy_refuses_the_agents_account_in_the_release_namespace_only() -> None:
    docs = render({"graphPolicy": {"enabled": True}}, namespace="sys")
    (account,) = [a["metadata"]["name"] for a in objects(docs, "ServiceAccount")]
    expressions = _expressions(one(docs, "ValidatingAdmissionPolicy", "r1-syncagent-graph-policy"))
    assert 'object.metadata.namespace != "sys"' in expressions
    assert f'a == "{account}"' in expressions
