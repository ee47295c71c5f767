"""A second server-side-apply writer forcing ``replicas`` every 2 s (what an HPA, a KEDA scaler or
a still-running old operator does), with the real ``kubectl apply --server-side``: the agent names
it in one ``FieldFight`` event on the graph and the flip-flop stops; ``syncagent conflicts``
lists the fight; after the backoff the agent takes the field back, and a fight that goes on
doubles the backoff (design §4.4, docs/ownership.md)."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import orjson

from syncagent.ssa import blame
from tests.support.agent import running_agent
from tests.support.fake_workloads import become_ready
from tests.support.graphs import component, graph
from tests.support.kube import Kube, events_for
from tests.support.kubectl import FieldWatch, Fighter
from tests.support.polling import eventually

DEADLINE = 60.0
FIGHTER = "hpa-like"
THEIRS, OURS = 4, 1


def _replicas_patch(ns: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": THEIRS},
    }


def _owners(kube: Kube, ns: str, name: str) -> set[str]:
    return {o.manager for o in blame(kube.get("Deployment", ns, name))[".spec.replicas"]}


def _conflicts_json(kubeconfig: Any, ns: str, name: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "syncagent.cli.main",
            "conflicts",
            name,
            "-n",
            ns,
            "--kubeconfig",
            str(kubeconfig),
            "--capability",
            "grove=false",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr  # 2: there are conflicts or fights
    return orjson.loads(done.stdout)


def test_a_second_manager_forcing_replicas_is_named_once_and_left_alone(
    control_plane, kube, namespace, kubectl
):
    kube.create(graph(namespace, "ff", [component("Frontend", "frontend")]))
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        become_ready(kube, namespace, "ff")
        read = lambda obj: obj["spec"]["replicas"]  # noqa: E731
        with (
            FieldWatch(kube, "Deployment", namespace, "ff-frontend", read) as watch,
            Fighter(kubectl, _replicas_patch(namespace, "ff-frontend"), FIGHTER) as fighter,
        ):
            started = time.monotonic()
            fights = eventually(
                lambda: events_for(kube, namespace, "ff", "FieldFight"),
                deadline=DEADLINE,
                what="a FieldFight event on the graph",
            )
            detected = time.monotonic()
            # The fighter keeps applying; the agent leaves replicas to it.
            fighter.wait_applies(5, deadline=DEADLINE)
            assert not fighter.errors, fighter.errors
            assert watch.changes(OURS, since=detected) == 0, watch.values()
            assert kube.get("Deployment", namespace, "ff-frontend")["spec"]["replicas"] == THEIRS
            assert _owners(kube, namespace, "ff-frontend") == {FIGHTER}
            taken_back = watch.changes(OURS, since=started, until=detected)
        (event,) = events_for(kube, namespace, "ff", "FieldFight")
        assert event["type"] == "Warning"
        assert event["involvedObject"]["kind"] == "DynamoGraphDeployment"
        assert f"Deployment/{namespace}/ff-frontend" in event["message"]
        assert f"'{FIGHTER}'" in event["message"]
        assert ".spec.replicas" in event["message"]
        assert event.get("count", 1) == 1
        assert len(fights) == 1
        # The agent forced it back (a ForcedConflict each) until the third take-back.
        assert taken_back == 2, watch.values()
        forced = events_for(kube, namespace, "ff-frontend", "ForcedConflict")
        assert sum(e.get("count", 1) for e in forced) == 2, forced
        metrics = agent.scrape()
        # An unknown writer's name never becomes a label (unbounded): it counts as other.
        assert metrics.sum("syncagent_field_fights_total", manager="other") == 1
        assert metrics.sum("syncagent_apply_yielded_total", manager="other") >= 1
        assert metrics.sum("syncagent_apply_conflicts_total", manager="other") >= 1
        assert not [key for key in metrics.samples if ("manager", FIGHTER) in key[1]]
        listed = _conflicts_json(control_plane.kubeconfig, namespace, "ff")
    (fight,) = listed["fights"]
    assert fight["object"] == f"Deployment/{namespace}/ff-frontend"
    assert (fight["manager"], fight["paths"], fight["backoffSeconds"]) == (
        FIGHTER,
        [".spec.replicas"],
        60.0,
    )


def test_after_the_backoff_the_field_is_taken_back_and_a_continued_fight_doubles_it(
    control_plane, kube, namespace, kubectl
):
    kube.create(graph(namespace, "fb", [component("Frontend", "frontend")]))
    flags = ("--fight-backoff", "5s", "--fight-max-backoff", "10s")
    with running_agent(control_plane.kubeconfig, *flags, namespace=namespace):
        become_ready(kube, namespace, "fb")
        with Fighter(kubectl, _replicas_patch(namespace, "fb-frontend"), FIGHTER):

            def extended() -> list[dict[str, Any]]:
                found = events_for(kube, namespace, "fb", "FieldFight")
                return [e for e in found if "back again" in e["message"]]

            (again,) = eventually(extended, deadline=DEADLINE, what="the fight to go on")
            assert "for 10s" in again["message"]
        # The fighter stopped: once the backoff ends, the agent sets replicas again, alone.
        eventually(
            lambda: kube.get("Deployment", namespace, "fb-frontend")["spec"]["replicas"] == OURS,
            deadline=DEADLINE,
            what="the agent to take replicas back after the backoff",
        )
        assert _owners(kube, namespace, "fb-frontend") == {"syncagent/workloads"}
        (first,) = [
            e
            for e in events_for(kube, namespace, "fb", "FieldFight")
            if "back again" not in e["message"]
        ]
        assert "for 5s" in first["message"]
