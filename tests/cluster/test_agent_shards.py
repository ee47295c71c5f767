"""Shards (issue 16 item 5): two agents with disjoint ``--shard-selector`` split the graphs,
each under its own Lease, and no graph is reconciled by both.

Proof from three sides: each agent's own metrics (graphs in its cache, objects it created),
its log (every object it applied belongs to its own graphs), and the objects themselves (every
object exists once, controlled by its graph, with one Apply entry of each of our managers).
The selector grammar is checked against the real API server's label filtering.
"""

from __future__ import annotations

import orjson
import pytest

from syncagent.runtime.shard import ShardSettings
from tests.support.agent import Agent, running_agent
from tests.support.graphs import component, graph
from tests.support.kube import DCD, DGD, Kube
from tests.support.polling import eventually

DEADLINE = 90.0
SHARDS = {"a": "shard in (a)", "b": "shard notin (a)"}  # disjoint, and b takes the unlabelled


def _graphs(namespace: str) -> dict[str, str]:
    """Graph name -> shard whose selector matches it."""
    return {"ga1": "a", "ga2": "a", "gb1": "b", "gnone": "b"}


def _create(kube: Kube, namespace: str) -> None:
    for name, shard in _graphs(namespace).items():
        body = graph(namespace, name, [component("frontend", "frontend")])
        if name != "gnone":
            body["metadata"]["labels"] = {"shard": shard}
        kube.create(body)


def _lease_args(namespace: str, shard: str) -> tuple[str, ...]:
    return (
        "--shard-name", shard,
        "--shard-selector", SHARDS[shard],
        "--leader-election-namespace", namespace,
        "--leader-election-lease-duration", "4s",
        "--leader-election-renew-deadline", "3s",
        "--leader-election-retry-period", "1s",
    )  # fmt: skip


def _applied_subjects(agent: Agent) -> set[str]:
    out = set()
    for line in agent.logs().splitlines():
        if line.startswith("{") and '"applied"' in line:
            out.add(orjson.loads(line)["object"])
    return out


def _graph_of(subject: str) -> str:
    # Kind/namespace/name; every object of graph g is named g or g-<component>.
    return subject.split("/")[2].split("-")[0]


def test_two_shards_split_the_graphs_and_never_reconcile_one_twice(control_plane, kube, namespace):
    _create(kube, namespace)
    with (
        running_agent(
            control_plane.kubeconfig, *_lease_args(namespace, "a"), namespace=namespace,
            leader_elect=True,
        ) as a,
        running_agent(
            control_plane.kubeconfig, *_lease_args(namespace, "b"), namespace=namespace,
            leader_elect=True,
        ) as b,
    ):  # fmt: skip
        # Each shard leads under its own Lease.
        eventually(lambda: a.is_leader() and b.is_leader(), deadline=DEADLINE, what="leaders")
        leases = {lease["metadata"]["name"] for lease in kube.list("Lease", namespace)}
        assert {"syncagent-a", "syncagent-b"} <= leases
        eventually(
            lambda: (
                all(len(kube.list(k, namespace)) == 4 for k in (DCD, "Deployment", "Service"))
                and all(
                    (g.get("status") or {}).get("conditions") for g in kube.list(DGD, namespace)
                )
            ),
            deadline=DEADLINE,
            what="every graph deployed and reported",
        )
        agents = {"a": a, "b": b}
        for shard, agent in agents.items():
            mine = {n for n, s in _graphs(namespace).items() if s == shard}
            scrape = agent.scrape()
            assert (
                scrape.sum(
                    "syncagent_cache_objects", resource=f"{namespace}/dynamographdeployments"
                )
                == 2
            )
            applied = _applied_subjects(agent)
            assert applied, f"shard {shard} applied nothing"
            assert {_graph_of(s) for s in applied} == mine
            # It created the DCD, Deployment and Service of each of its graphs, nothing else.
            for kind in (DCD, "Deployment", "Service"):
                created = scrape.sum("syncagent_apply_actions_total", kind=kind, result="created")
                assert created == len(mine), (shard, kind, created)
    for kind in (DCD, "Deployment", "Service"):
        for obj in kube.list(kind, namespace):
            managers = [m["manager"] for m in obj["metadata"]["managedFields"]]
            ours = [m for m in managers if m.startswith("syncagent/")]
            assert len(ours) == len(set(ours)), (kind, obj["metadata"]["name"], managers)


@pytest.mark.parametrize(
    "selector",
    ["shard in (a)", "shard notin (a)", "shard=a", "shard!=a", "shard", "!shard", "shard=a,x"],
)
def test_the_shard_selector_matches_what_the_api_server_selects(kube, namespace, selector):
    label_sets = [{}, {"shard": "a"}, {"shard": "b"}, {"shard": "a", "x": "1"}, {"x": "1"}]
    for i, labels in enumerate(label_sets):
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"c{i}", "namespace": namespace, "labels": labels},
            }
        )
    path = kube.path("ConfigMap", namespace)
    served = kube.http.get(path, params={"labelSelector": selector}).json()["items"]
    by_server = {c["metadata"]["name"] for c in served}
    local = ShardSettings(name="s", selector=selector)
    by_us = {f"c{i}" for i, labels in enumerate(label_sets) if local.matches(labels)}
    assert by_us == by_server
