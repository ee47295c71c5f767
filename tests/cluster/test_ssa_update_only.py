"""A write to an object the caller saw never re-creates it (issue 14 item 5).

The caller's view comes from a watch cache and can be stale: the object may have been deleted
(garbage collection of its owner, a user) or deleted and re-created by someone else. Every write
the engine makes to a seen object carries that object's UID, and the real API server refuses
it: 409 "uid mismatch" when the object is gone, 422 (``metadata.uid`` immutable) when another
object now has the name. Before, the apply re-created the deleted object.
"""

from __future__ import annotations

import pytest

from fieldmanagers import workloads
from syncagent.cli.pathways import PROGRAMS
from syncagent.programs.writes import Writer
from syncagent.render import Rendered
from syncagent.ssa import ApplyOptions, Engine, InvalidError, PreconditionError, owner_of
from tests.cluster.support.objects import configmap, deployment

MANAGER = "syncagent/tests-update-only"


def workload(namespace: str, *, replicas: int) -> Rendered:
    body = deployment(namespace, replicas=replicas)
    return Rendered(workloads.MANAGER.name, "apps/v1", "Deployment", "web", namespace, body)


async def stale_view(engine: Engine, desired: dict) -> dict:
    """Apply ``desired``, then delete it: the returned view is what a lagging cache holds."""
    created = await engine.apply(desired, ApplyOptions(manager=MANAGER))
    assert await engine.delete(desired, uid=created.object["metadata"]["uid"])
    return created.object


@pytest.mark.anyio
@pytest.mark.parametrize("fresh_engine", [False, True], ids=["certain-write", "dry-run"])
async def test_a_stale_view_of_a_deleted_object_does_not_recreate_it(
    async_client, namespace, fresh_engine
):
    # certain-write: our desired object changed since we converged it, so the engine writes
    # without a dry run. dry-run: a restarted engine (no cache) must ask the server first.
    engine = Engine(async_client)
    desired = {**configmap(namespace, "c"), "data": {"a": "1"}}
    view = await stale_view(engine, desired)
    writer = Engine(async_client) if fresh_engine else engine
    changed = {**desired, "data": {"a": "2"}}
    with pytest.raises(PreconditionError, match=r"^ConfigMap/.*/c: .*uid mismatch"):
        await writer.apply(changed, ApplyOptions(manager=MANAGER, force=True), live=view)
    assert await engine.read(desired) is None


@pytest.mark.anyio
async def test_a_stale_view_never_writes_to_an_object_recreated_by_someone_else(
    async_client, namespace
):
    engine = Engine(async_client)
    desired = {**configmap(namespace, "c"), "data": {"a": "1"}}
    view = await stale_view(engine, desired)
    theirs = await engine.apply(
        {**desired, "data": {"b": "theirs"}}, ApplyOptions(manager="someone-else")
    )
    with pytest.raises(InvalidError, match=r"^ConfigMap/.*/c: .*metadata.uid"):
        await engine.apply(
            {**desired, "data": {"a": "2"}}, ApplyOptions(manager=MANAGER, force=True), live=view
        )
    live = await engine.read(desired)
    assert live["metadata"]["resourceVersion"] == theirs.resource_version
    assert live["data"] == {"b": "theirs"}


@pytest.mark.anyio
async def test_an_owned_workload_deleted_under_a_stale_view_is_not_recreated(
    async_client, namespace
):
    # The program path: Writer.apply_owned with a cache view of a Deployment it controls.
    engine = Engine(async_client)
    owner = owner_of(
        (await engine.apply(configmap(namespace, "dcd"), ApplyOptions(manager=MANAGER))).object
    )
    rendered = workload(namespace, replicas=2)
    created = await Writer(engine, takeover=PROGRAMS.takeover_policy).apply_owned(
        rendered, owner=owner, live=None
    )
    assert await engine.delete(created.object, uid=created.object["metadata"]["uid"])
    changed = workload(namespace, replicas=3)
    deletes = engine.counter.count("delete")
    with pytest.raises(PreconditionError, match=r"^Deployment/.*/web: .*uid mismatch"):
        await Writer(engine, takeover=PROGRAMS.takeover_policy).apply_owned(
            changed, owner=owner, live=created.object
        )
    assert engine.counter.count("delete") == deletes  # no copy was made, so none to remove
    assert await engine.read(deployment(namespace)) is None
