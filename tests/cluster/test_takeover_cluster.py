"""Takeover against the test API server: what a policy selects of an old writer's Update
entries is merged into ours in one guarded write; afterwards those fields are ours and go away
when we stop applying them, while everything else (the old writer's other fields, a user's
``kubectl label``) keeps its owner and survives."""

from __future__ import annotations

import anyio
import pytest

from syncagent.inspect.planapplier import PlanApplier
from syncagent.runtime.client import make_client
from syncagent.runtime.metrics import Metrics
from syncagent.ssa import ApplyOptions, Engine, PreconditionError, RequestCounter
from syncagent.ssa.fieldsets import FieldSelector
from syncagent.ssa.takeover import TakeoverPolicy, TakeoverRule, take_over
from tests.support.kube import Kube

OLD = frozenset({"manager"})
# A generic policy (ssa/ knows no Dynamo): the old writer's spec, its example.com/ labels, its
# references to ConfigMaps, and its status.
POLICY = TakeoverPolicy(
    (
        TakeoverRule(
            OLD,
            (
                FieldSelector(("spec",)),
                FieldSelector(("metadata", "labels"), prefix="example.com/"),
                FieldSelector(
                    ("metadata", "ownerReferences"), item=(("kind", frozenset({"ConfigMap"})),)
                ),
            ),
            kinds=frozenset({"Deployment"}),
        ),
        TakeoverRule(OLD, (FieldSelector(("status",)),), subresource="status"),
    )
)
# What the policy leaves of the old writer's main entry: its labels of no selected prefix.
LEFT_TO_THE_OLD_WRITER = {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:team": {}}}}
TARGETS = {
    "content_manager": "test/content",
    "ownership_manager": "test/ownership",
    "status_manager": "test/status",
    "policy": POLICY,
}


def _upstream_deployment(kube: Kube, ns: str, kubectl) -> dict:
    """A Deployment as an old controller and a user's kubectl leave it (Update entries only)."""
    owner = kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": ns}}
    )
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": ns,
            "labels": {"app": "web", "example.com/old": "x", "team": "search"},
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
    kubectl.label("deployment/web", "edited=y")
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
            await client.aclose()

    return anyio.run(go)


def _owned(obj: dict, manager: str, operation: str = "Update") -> dict:
    return next(
        e["fieldsV1"]
        for e in obj["metadata"]["managedFields"]
        if (e["manager"], e["operation"], e.get("subresource", "")) == (manager, operation, "")
    )


def test_takeover_moves_exactly_what_the_policy_selects(
    control_plane, namespace: str, kube, kubectl
) -> None:
    live = _upstream_deployment(kube, namespace, kubectl)
    assert {m for m, op, _ in _managers(live) if op == "Update"} >= {"manager", "kubectl-label"}

    async def work(engine: Engine) -> dict:
        result = await take_over(engine, live, **TARGETS)
        assert result.changed
        assert engine.counter.writes == 1  # one guarded update
        return result.object

    after = _with_engine(control_plane.kubeconfig, work)
    stored = kube.get("Deployment", namespace, "web")
    # The old writer keeps what the policy does not select; the user's kubectl entry is whole.
    assert _owned(stored, "manager") == LEFT_TO_THE_OLD_WRITER
    assert _owned(stored, "kubectl-label") == _owned(live, "kubectl-label")
    assert ("manager", "Update", "status") not in _managers(stored)
    assert ("test/ownership", "Apply", "") in _managers(stored)
    assert ("test/status", "Apply", "status") in _managers(stored)
    assert stored["metadata"]["labels"] == live["metadata"]["labels"]  # content untouched
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    refs = next(e for e in stored["metadata"]["managedFields"] if e["manager"] == "test/ownership")
    assert "f:ownerReferences" in refs["fieldsV1"]["f:metadata"]

    async def apply(engine: Engine) -> dict:
        entry = await engine.apply(
            _content(namespace), ApplyOptions(manager="test/content"), live=stored
        )
        return entry.object

    applied = _with_engine(control_plane.kubeconfig, apply)
    # The taken fields we do not apply do not linger (they were ours alone after the takeover);
    # what the old writer kept and what the user labelled survive.
    assert applied["metadata"]["labels"] == {"app": "web", "team": "search", "edited": "y"}
    assert applied["metadata"]["ownerReferences"] == live["metadata"]["ownerReferences"]
    assert "revisionHistoryLimit" not in _owned(applied, "test/content", "Apply")["f:spec"]


def test_stale_view_is_refused(control_plane, namespace: str, kube, kubectl) -> None:
    live = _upstream_deployment(kube, namespace, kubectl)
    kubectl.label("deployment/web", "late=z")

    async def work(engine: Engine) -> None:
        with pytest.raises(PreconditionError, match=f"Deployment/{namespace}/web"):
            await take_over(engine, live, **TARGETS)

    _with_engine(control_plane.kubeconfig, work)
    stored = kube.get("Deployment", namespace, "web")
    assert "manager" in {m for m, _, _ in _managers(stored)}


def test_dry_run_takeover_changes_nothing(control_plane, namespace: str, kube, kubectl) -> None:
    live = _upstream_deployment(kube, namespace, kubectl)

    async def work(engine: Engine) -> dict:
        result = await take_over(PlanApplier(engine), live, **TARGETS)
        assert engine.counter.writes == 0
        return result.object

    preview = _with_engine(control_plane.kubeconfig, work)
    assert _owned(preview, "manager") == LEFT_TO_THE_OLD_WRITER
    assert ("test/ownership", "Apply", "") in _managers(preview)
    stored = kube.get("Deployment", namespace, "web")
    assert stored["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]
    assert _owned(stored, "manager") == _owned(live, "manager")
    assert ("test/ownership", "Apply", "") not in _managers(stored)
