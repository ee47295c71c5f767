"""N shards from one release (issue 16 item 5): one Deployment per shard whose flags the agent
accepts, non-overlapping pod selectors, and a Lease Role covering exactly the shards' Leases.
Rendered by the pinned helm; the flags are parsed by the agent's own ``run`` parser."""

from __future__ import annotations

import pytest

from syncagent.cli.main import build_parser
from syncagent.cli.pathways import PROGRAMS
from syncagent.cli.run.agent import shard_of
from syncagent.cli.run.settings import agent_settings
from tests.chart.support.render import RELEASE_NS, Rules, objects, one, render, render_error

SHARDS = [
    {"name": "a", "selector": "shard in (a)", "watchNamespaces": ["team-a"]},
    {"name": "b", "selector": "shard notin (a)"},
]
VALUES = {"watchNamespaces": ["team-a", "team-b"], "shards": SHARDS}


def deployments() -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in objects(render(VALUES), "Deployment")}


def test_one_deployment_per_shard_with_its_own_pods():
    found = deployments()
    assert sorted(found) == ["r1-syncagent-a", "r1-syncagent-b"]
    selectors = [d["spec"]["selector"]["matchLabels"] for d in found.values()]
    # Neither Deployment's selector matches the other's pods.
    for dep, selector in zip(found.values(), selectors, strict=True):
        labels = dep["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= labels.items()
        other = next(d for d in found.values() if d is not dep)
        assert not selector.items() <= other["spec"]["template"]["metadata"]["labels"].items()


def test_each_shard_runs_with_flags_the_agent_accepts():
    leases = {}
    for name, dep in deployments().items():
        args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
        parsed = build_parser(PROGRAMS).parse_args(args)
        shard = shard_of(agent_settings(parsed))
        leases[name] = (shard, shard.lease_name(parsed.leader_election_id), parsed.namespace)
    assert leases["r1-syncagent-a"][0].selector == "shard in (a)"
    assert leases["r1-syncagent-a"][2] == ["team-a"]
    assert leases["r1-syncagent-b"][2] == ["team-a", "team-b"]
    role = one(render(VALUES), "Role", "r1-syncagent-leader-election")
    rules = Rules.of(role)
    for _, lease, _ in leases.values():
        assert rules.allows("coordination.k8s.io", "leases", "update", name=lease)
    assert not rules.allows("coordination.k8s.io", "leases", "update", name="syncagent")
    assert role["metadata"]["namespace"] == RELEASE_NS


def test_without_shards_the_release_runs_one_unsharded_agent():
    dep = one(render(), "Deployment")
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert not [a for a in args if a.startswith("--shard")]
    assert "syncagent.io/shard" not in dep["spec"]["selector"]["matchLabels"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"shards": [{"name": "a"}, {"name": "a"}]}, 'the name "a" appears twice'),
        ({"shards": [{"name": "Bad_Name"}]}, "shards/0/name"),
        (
            {"watchNamespaces": ["ns1"], "shards": [{"name": "a", "watchNamespaces": ["ns2"]}]},
            'shards[a].watchNamespaces: "ns2" is not in watchNamespaces',
        ),
    ],
)
def test_bad_shards_are_refused_naming_the_field(values, message):
    assert message in render_error(values)
