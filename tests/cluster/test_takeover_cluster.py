"""Takeover against the test API server: Update entries of old writers are merged into ours in
one guarded write; afterwards no field is owned by them and fields we stop applying go away."""

from __future__ import annotations

import anyio
import pytest

from syncagent.runtime.client import make_client
from syncagent.runtime.metrics import Metrics
from syncagent.ssa import Engine, PreconditionError, RequestCounter
from syncagent.ssa.takeover import KUBECTL, take_over
from tests.cluster.test_agent_support import Kube

POLICY = KUBECTL.with_managers("manager")
TARGETS = {
    "content_manager": "test/content",
    "ownership_manager": "test/ownership",
    "status_manager": "test/status",
    "policy": POLICY,
}


def _upstream_deployment(kube: Kube, ns: str) -> dict:
    """A Deployment as the upstream operator and kubectl leave it (Update entries only)."""
    owner = kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": ns}}
    )
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": ns,
            "labels": {"app": "web", "old": "x"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": "owner",
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "img:1"}]},
            },
        },
    }
    kube.request("POST", kube.path("Deployment", ns), body, fieldManager="manager")
    kube.merge(
        "Deployment", ns, "web", {"metadata": {"labels": {"edited": "y"}}}, manager="kubectl-edit"
    )
    kube.merge(
        "Deployment",
        ns,
        "web",
        {"status": {"observedGeneration": 1}},
        sub="status",
        manager="manager",
    )
    return kube.get("Deployment", ns, "web")


def _managers(obj: dict) -> set[tuple[str, str, str]]:
    return {
        (e["manager"], e["operation"], e.get("subresource", ""))
        for e in obj["metadata"]["managedFields"]
    }


def _content(ns: str) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns, "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "img:1"}]},
            },
        },
    }


def _with_engine(kubeconfig, work):
    async def go():
        client = make_client(kubeconfig=kubeconfig, metrics=Metrics())
        try:
            return await work(Engine(client, counter=RequestCounter()))
        finally:
            await client.close()

    return anyio.run(go)


def test_takeover_leaves_nothing_to_the_old_managers(control_plane, namespace: str, client) -> None:
    kube = Kube(client)
    live = _upstream_deployment(kube, namespace)
    assert {m for m, op, _ in _managers(live) if op == "Update"} >= {"manager", "kubectl-edit"}

    async def work(engine: Engine) -> dict:
        result = await take_over(engine, live, **TARGETS)
        assert result.changed
        assert engine.counter.writes == 1  # one guarded update
        return result.object

    after = _with_engine(control_plane.kubeconfig, work)
    stored = kube.get("Deployment", namespace, "web")
    names = {m for m, _, _ in _managers(stored)}
    assert "manager" not in names
    assert "kubectl-edit" not in names
    assert ("test/ownership", "Apply", "") in _managers(stored)
    assert ("test/status", "Apply", "status") in _managers(stored)
    assert stored["metadata"]["labels"] == live["metadata"]["labels"]  # content untouched
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    refs = next(e for e in stored["metadata"]["managedFields"] if e["manager"] == "test/ownership")
    assert "f:ownerReferences" in refs["fieldsV1"]["f:metadata"]

    async def apply(engine: Engine) -> dict:
        entry = await engine.apply(_content(namespace), manager="test/content", live=stored)
        return entry.object

    applied = _with_engine(control_plane.kubeconfig, apply)
    # The fields we no longer apply do not linger: they were ours alone after the takeover.
    assert applied["metadata"]["labels"] == {"app": "web"}
    assert applied["metadata"]["ownerReferences"] == live["metadata"]["ownerReferences"]


def test_stale_view_is_refused(control_plane, namespace: str, client) -> None:
    kube = Kube(client)
    live = _upstream_deployment(kube, namespace)
    kube.merge(
        "Deployment",
        namespace,
        "web",
        {"metadata": {"labels": {"late": "z"}}},
        manager="kubectl-label",
    )

    async def work(engine: Engine) -> None:
        with pytest.raises(PreconditionError, match=f"Deployment/{namespace}/web"):
            await take_over(engine, live, **TARGETS)

    _with_engine(control_plane.kubeconfig, work)
    stored = kube.get("Deployment", namespace, "web")
    assert "manager" in {m for m, _, _ in _managers(stored)}


def test_dry_run_takeover_changes_nothing(control_plane, namespace: str, client) -> None:
    kube = Kube(client)
    live = _upstream_deployment(kube, namespace)

    async def work(engine: Engine) -> dict:
        result = await take_over(engine, live, dry_run=True, **TARGETS)
        assert engine.counter.writes == 0
        return result.object

    preview = _with_engine(control_plane.kubeconfig, work)
    assert "manager" not in {m for m, _, _ in _managers(preview)}
    stored = kube.get("Deployment", namespace, "web")
    assert stored["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]
    assert "manager" in {m for m, _, _ in _managers(stored)}
