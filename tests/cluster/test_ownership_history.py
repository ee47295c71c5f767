"""Ownership history on the real API server: the agent (a host process) records who took which
field from whom and serves it as an aggregated API; ``syncagent blame --history`` reads it
through the API server, with the real ``kubectl`` as the other writer (``scale``, ``label``,
``apply --server-side``), before and after an agent restart (docs/ownership.md §6). Who may read
it: tests/cluster/test_history_access.py."""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Any

import orjson
import pytest

from syncagent.cli.main import main
from tests.support.agent import running_agent
from tests.support.graphs import component, graph
from tests.support.history import aggregated, wait_available
from tests.support.kubectl import Kubectl
from tests.support.polling import eventually

DEADLINE = 60.0
SERVICE = "agent-history"
DEPLOY = "hist-frontend"
OURS = "syncagent/workloads"
REPLICAS = ".spec.replicas"


def blame_history(
    capsys: pytest.CaptureFixture[str], kubeconfig: Any, ns: str, *extra: str
) -> dict[str, Any] | None:
    argv = ["blame", f"deploy/{DEPLOY}", "--history", "-n", ns, "--kubeconfig", str(kubeconfig)]
    code = main([*argv, *extra])
    out, err = capsys.readouterr()
    if code != 0 and "HTTP 503" in err:
        return None  # the API server has not (again) seen the agent's port answer: not yet
    assert code == 0, err
    return orjson.loads(out) if "-o" in extra else {"text": out}


def field(doc: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return next((f["steps"] for f in doc["fields"] if f["path"] == path), [])


def managers(steps: list[dict[str, Any]]) -> list[list[str]]:
    return [sorted(o["manager"] for o in s["owners"]) for s in steps]


def scale_and_wait_back(kubectl: Kubectl, kube: Any, ns: str) -> None:
    """``kubectl scale`` takes replicas; the agent puts its value back (a forced apply)."""
    kubectl("scale", f"deployment/{DEPLOY}", "--replicas=3")
    eventually(
        lambda: kube.get("Deployment", ns, DEPLOY)["spec"]["replicas"] == 1,
        deadline=DEADLINE,
        what="the agent to put replicas back",
    )


def test_blame_history_shows_each_flip_and_where_it_begins_after_a_restart(
    control_plane, kube, namespace, kubectl, capsys, tmp_path
):
    with aggregated(kube, namespace, SERVICE, tmp_path / "tls") as flags:
        _flips_before_and_after_a_restart(control_plane, kube, namespace, kubectl, capsys, flags)


def _flips_before_and_after_a_restart(control_plane, kube, namespace, kubectl, capsys, flags):
    kube.create(graph(namespace, "hist", [component("Frontend", "frontend")]))
    read = lambda *extra: blame_history(capsys, control_plane.kubeconfig, namespace, *extra)  # noqa: E731
    with running_agent(control_plane.kubeconfig, *flags, namespace=namespace):
        wait_available(kube)
        eventually(
            lambda: kube.get("Deployment", namespace, DEPLOY),
            deadline=DEADLINE,
            what="the agent to create the Deployment",
        )
        scale_and_wait_back(kubectl, kube, namespace)
        kubectl.label(f"deployment/{DEPLOY}", "team=a")
        ssa = f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {DEPLOY}\n  labels:\n    cost: x\n"
        kubectl("apply", "--server-side", "--field-manager=x", "-f", "-", stdin=ssa)

        def recorded() -> dict[str, Any] | None:
            doc = read("-o", "json")
            if doc is None:
                return None
            done = len(field(doc, REPLICAS)) == 3 and field(doc, ".metadata.labels.cost")
            return doc if done and field(doc, ".metadata.labels.team") else None

        doc = eventually(recorded, deadline=DEADLINE, what="the history of all three writers")
        assert doc["begins"] == "created"  # by this agent: it saw every change since
        flips = field(doc, REPLICAS)
        assert managers(flips)[0] == [OURS]
        taker = flips[1]["owners"]
        assert [(o["operation"], o["subresource"]) for o in taker] == [("Update", "scale")]
        assert taker[0]["manager"].startswith("kubectl")
        assert managers(flips)[2] == [OURS]
        assert [(s.get("before"), s.get("after")) for s in flips[1:]] == [("1", "3"), ("3", "1")]
        assert managers(field(doc, ".metadata.labels.team")) == [[], ["kubectl-label"]]
        assert managers(field(doc, ".metadata.labels.cost")) == [[], ["x"]]
        text = eventually(read, deadline=DEADLINE, what="the history as text")["text"]
        assert "when the object was created" in text
        assert re.search(rf"Z  {taker[0]['manager']} \(Update/scale\) +1 -> 3\n", text), text
    # Creation times are whole seconds, and an object created in the second the history began
    # counts as created (docs/ownership.md §6): restart in a later second, or the restarted
    # agent's history would rightly begin at the creation.
    created = datetime.fromisoformat(
        kube.get("Deployment", namespace, DEPLOY)["metadata"]["creationTimestamp"]
    ).timestamp()
    eventually(lambda: time.time() >= created + 1.0, deadline=3, what="a second after the create")
    restarted = time.time()
    with running_agent(control_plane.kubeconfig, *flags, namespace=namespace):
        after = eventually(
            lambda: read("-o", "json"), deadline=DEADLINE, what="the restarted agent's history"
        )
        assert after["begins"] == "agent-start"
        assert after["fields"] == []  # what the first agent saw is gone with it
        assert after["since"] >= time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(restarted - 1))
        scale_and_wait_back(kubectl, kube, namespace)

        def flipped() -> dict[str, Any] | None:
            doc = read("-o", "json")
            return doc if doc and len(field(doc, REPLICAS)) == 3 else None

        again = eventually(
            flipped,
            deadline=DEADLINE,
            what="the flip after the restart",
        )
        assert managers(field(again, REPLICAS))[::2] == [[OURS], [OURS]]
        assert again["since"] == after["since"]
