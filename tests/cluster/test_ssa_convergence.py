"""Acceptance 1: sparse objects converge; converged applies write nothing, cached ones ask nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap

from syncagent.ssa import ABSENT, ApplyOptions, Engine, PreconditionError
from tests.cluster.support.objects import (
    configmap,
    deployment,
    disaggregatedset,
    leaderworkerset,
    podcliqueset,
    service,
)

MANAGER = "syncagent/tests-content"

KINDS: dict[str, Callable[[str], dict]] = {
    "deployment": deployment,
    "service": service,
    "leaderworkerset": leaderworkerset,
    "disaggregatedset": disaggregatedset,
    "podcliqueset": podcliqueset,
}


async def converges(async_client, desired: dict) -> None:
    first = await Engine(async_client).apply(desired, ApplyOptions(manager=MANAGER, force=True))
    assert first.action == "created"
    assert first.object["metadata"]["uid"]

    # A new engine has no cache: the second apply must prove convergence by dry run.
    engine = Engine(async_client)
    second = await engine.apply(desired, ApplyOptions(manager=MANAGER, force=True))
    assert second.action == "unchanged", second.differences
    assert engine.counter.writes == 0
    assert engine.counter.count("apply", dry_run=True) == 1

    before = engine.counter.total
    third = await engine.apply(
        desired, ApplyOptions(manager=MANAGER, force=True), live=second.object
    )
    assert third.action == "unchanged"
    assert engine.counter.total == before
    assert (
        third.object["metadata"]["resourceVersion"] == first.object["metadata"]["resourceVersion"]
    )


@pytest.mark.anyio
@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_converges_v0_9_0(async_client, namespace, kind):
    await converges(async_client, KINDS[kind](namespace))


@pytest.mark.anyio
@pytest.mark.lws("v0.10.0")
@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_converges_v0_10_0(async_client, namespace, kind):
    desired = KINDS[kind](namespace)
    await converges(async_client, desired)
    if kind == "disaggregatedset":
        live = await Engine(async_client).get(desired)
        assert live["spec"]["slices"] == 1  # a v0.10.0 CRD default we never sent
        assert "slices" not in desired["spec"]


@pytest.mark.anyio
async def test_server_defaults_do_not_look_like_changes(async_client, namespace):
    desired = service(namespace)
    created = await Engine(async_client).apply(desired, ApplyOptions(manager=MANAGER))
    port = created.object["spec"]["ports"][0]
    assert port["protocol"] == "TCP"
    assert created.object["spec"]["clusterIP"]
    assert "protocol" not in desired["spec"]["ports"][0]
    entry = await Engine(async_client).apply(desired, ApplyOptions(manager=MANAGER))
    assert entry.action == "unchanged"


@pytest.mark.anyio
async def test_a_change_is_configured_and_recorded(async_client, namespace):
    engine = Engine(async_client)
    created = await engine.apply(deployment(namespace, replicas=1), ApplyOptions(manager=MANAGER))
    changed = await engine.apply(
        deployment(namespace, replicas=3), ApplyOptions(manager=MANAGER), live=created.object
    )
    assert changed.action == "configured"
    assert changed.differences == (".spec",)
    assert changed.object["spec"]["replicas"] == 3
    before = engine.counter.total
    again = await engine.apply(
        deployment(namespace, replicas=3), ApplyOptions(manager=MANAGER), live=changed.object
    )
    assert again.action == "unchanged"
    assert engine.counter.total == before


@pytest.mark.anyio
async def test_stale_cache_view_is_not_trusted(async_client, client, namespace):
    engine = Engine(async_client)
    created = await engine.apply(deployment(namespace, replicas=1), ApplyOptions(manager=MANAGER))
    # Someone else writes; the caller still hands the old view.
    client.patch(
        Deployment,
        "web",
        {"metadata": {"labels": {"x": "y"}}},
        namespace=namespace,
        field_manager="someone",
    )
    # A fresh engine (no cache record) dry-runs; the dry run's resourceVersion exposes the
    # stale view, and the comparison uses the object as it is now.
    entry = await Engine(async_client).apply(
        deployment(namespace, replicas=1), ApplyOptions(manager=MANAGER), live=created.object
    )
    assert entry.action == "unchanged"
    assert entry.before["metadata"]["labels"]["x"] == "y"  # compared with the fresh object


@pytest.mark.anyio
async def test_what_a_controller_writes_beside_our_apply_costs_no_request(
    async_client, client, namespace
):
    """What the Deployment controller writes after a create (status, its revision annotation)
    and a label someone else adds leave our apply converged: no dry run. A change to a label
    we apply is one our apply undoes: dry run, then the write."""
    desired = deployment(namespace, replicas=1, labels={"app": "web", "tier": "ours"})
    engine = Engine(async_client)
    created = await engine.apply(desired, ApplyOptions(manager=MANAGER))
    client.patch(
        Deployment,
        "web",
        {
            "metadata": {
                "annotations": {"deployment.kubernetes.io/revision": "1"},
                "labels": {"team": "theirs"},
            }
        },
        namespace=namespace,
        field_manager="kube-controller-manager",
    )
    client.patch(
        Deployment.Status,
        "web",
        {"status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1}},
        namespace=namespace,
        field_manager="kube-controller-manager",
    )
    moved = (await engine.get(desired)) or {}
    assert moved["metadata"]["resourceVersion"] != created.resource_version
    before = engine.counter.total
    again = await engine.apply(desired, ApplyOptions(manager=MANAGER), live=moved)
    assert again.action == "unchanged"
    assert engine.counter.total == before

    client.patch(
        Deployment,
        "web",
        {"metadata": {"labels": {"tier": "changed"}}},
        namespace=namespace,
        field_manager="someone",
    )
    relabelled = (await engine.get(desired)) or {}
    writes, dry_runs = engine.counter.writes, engine.counter.count("apply", dry_run=True)
    restored = await engine.apply(
        desired, ApplyOptions(manager=MANAGER, force=True), live=relabelled
    )
    assert restored.action == "configured"
    assert restored.object["metadata"]["labels"] == {"app": "web", "tier": "ours", "team": "theirs"}
    assert (engine.counter.writes, engine.counter.count("apply", dry_run=True)) == (
        writes + 1,
        dry_runs + 1,
    )


@pytest.mark.anyio
async def test_a_copy_recreated_under_the_name_is_not_converged_by_the_old_record(
    async_client, client, namespace
):
    """Same name, same content, another object (someone deleted ours and created theirs): our
    apply writes, so the copy carries our manager's fields again."""
    desired = {**configmap(namespace, "c"), "data": {"k": "v"}}
    engine = Engine(async_client)
    await engine.apply(desired, ApplyOptions(manager=MANAGER))
    client.delete(ConfigMap, "c", namespace=namespace)
    copy = await Engine(async_client).apply(desired, ApplyOptions(manager="someone"))
    writes = engine.counter.writes
    again = await engine.apply(desired, ApplyOptions(manager=MANAGER), live=copy.object)
    assert engine.counter.writes == writes + 1
    managers = {m["manager"] for m in again.object["metadata"]["managedFields"]}
    assert managers == {MANAGER, "someone"}


@pytest.mark.anyio
async def test_status_apply_converges_and_honours_resource_version(async_client, namespace):
    engine = Engine(async_client)
    pcs = await engine.apply(podcliqueset(namespace), ApplyOptions(manager=MANAGER))
    rv = pcs.object["metadata"]["resourceVersion"]
    status = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": "pcs", "namespace": namespace, "resourceVersion": rv},
        "status": {"availableReplicas": 0, "updatedReplicas": 0, "replicas": 1},
    }
    options = ApplyOptions(
        manager="syncagent/tests-status",
        subresource="status",
        resource_version_precondition=True,
    )
    written = await engine.apply(status, options)
    assert written.action == "configured"
    assert written.object["status"]["replicas"] == 1
    assert written.object["spec"] == pcs.object["spec"]
    fresh = {
        **status,
        "metadata": {**status["metadata"], "resourceVersion": written.resource_version},
    }
    again = await Engine(async_client).apply(fresh, options)
    assert again.action == "unchanged"
    # The stale resourceVersion is now a failed precondition, not a silent overwrite.
    with pytest.raises(PreconditionError, match=r"^PodCliqueSet/"):
        await Engine(async_client).apply(
            {**status, "status": {**status["status"], "replicas": 2}}, options
        )


@pytest.mark.anyio
async def test_absent_view_and_delete_with_uid(async_client, namespace):
    engine = Engine(async_client)
    created = await engine.apply(service(namespace), ApplyOptions(manager=MANAGER), live=ABSENT)
    uid = created.object["metadata"]["uid"]
    with pytest.raises(PreconditionError, match=r"^Service/.*/web: .*UID in the precondition"):
        await engine.delete(service(namespace), uid="00000000-0000-0000-0000-000000000000")
    assert await engine.delete(service(namespace), uid=uid)
    assert await engine.get(service(namespace)) is None  # a Service has no finalizers
    assert not await engine.delete(service(namespace), uid=uid)


@pytest.mark.anyio
async def test_apply_all_then_a_resync_from_listed_views_asks_nothing(
    async_client, typed_client, namespace
):
    desired = [{**configmap(namespace, f"c{i:02d}"), "data": {"i": str(i)}} for i in range(20)]
    engine = Engine(async_client)
    entries = await engine.apply_all(desired, ApplyOptions(manager=MANAGER), concurrency=4)
    assert [e.subject for e in entries] == [f"ConfigMap/{namespace}/c{i:02d}" for i in range(20)]
    assert {e.action for e in entries} == {"created"}
    # What a watch cache would hold: typed objects from a LIST.
    views = {
        f"ConfigMap/{namespace}/{o.metadata.name}": o
        async for o in typed_client.list(ConfigMap, namespace=namespace)
    }
    before = engine.counter.total
    again = await engine.apply_all(
        desired, ApplyOptions(manager=MANAGER), live=views, concurrency=4
    )
    assert {e.action for e in again} == {"unchanged"}
    assert engine.counter.total == before


@pytest.mark.anyio
async def test_preview_shows_the_change_and_writes_nothing(async_client, namespace):
    engine = Engine(async_client)
    created = await engine.apply(deployment(namespace, replicas=1), ApplyOptions(manager=MANAGER))
    writes = engine.counter.writes
    planned = await engine.preview(deployment(namespace, replicas=4), ApplyOptions(manager=MANAGER))
    assert planned.action == "configured"
    assert planned.dry_run
    assert planned.object["spec"]["replicas"] == 4
    assert planned.before["spec"]["replicas"] == 1
    assert engine.counter.writes == writes
    live = await engine.get(deployment(namespace))
    assert live["metadata"]["resourceVersion"] == created.resource_version
