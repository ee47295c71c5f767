"""A create for an owner that is already gone (found by the chaos tier's crash-point sweep: after
a cutover deleted a DCD, a reconcile working from the watch cache re-created the DCD's
LeaderWorkerSet, which ran until garbage collection removed it). The writer reads the owner
from the real API server before creating, and creates nothing for a deleted owner."""

from __future__ import annotations

import pytest

from syncagent.cli.pathways import PROGRAMS
from syncagent.programs.writes import Writer
from syncagent.render import Rendered
from syncagent.ssa import ApplyOptions, Engine, SsaError, owner_of
from tests.cluster.support.objects import configmap

WORKLOADS = "syncagent/tests-workloads"


def child(namespace: str, name: str, owner) -> Rendered:
    return Rendered(
        manager=WORKLOADS,
        api_version="v1",
        kind="ConfigMap",
        name=name,
        namespace=namespace,
        body=configmap(namespace, name),
        owner=owner,
    )


@pytest.mark.anyio
async def test_nothing_is_created_for_an_owner_deleted_after_the_cache_saw_it(
    async_client, namespace
):
    engine = Engine(async_client)
    made = await engine.apply(configmap(namespace, "dcd"), ApplyOptions(manager="test-owners"))
    owner = owner_of(made.object)
    await engine.delete(made.object, uid=owner.uid)
    writer = Writer(engine, takeover=PROGRAMS.takeover_policy)
    with pytest.raises(SsaError, match=r"ConfigMap/.*/dcd .* is gone or being deleted"):
        # the cache still held the owner and no child: live=None, known=True
        await writer.apply_owned(child(namespace, "lws", owner), owner=owner, live=None, known=True)
    assert await engine.read(configmap(namespace, "lws")) is None


@pytest.mark.anyio
async def test_a_live_owner_is_read_once_per_reconcile(async_client, namespace):
    engine = Engine(async_client)
    made = await engine.apply(configmap(namespace, "dcd"), ApplyOptions(manager="test-owners"))
    owner = owner_of(made.object)
    writer = Writer(engine, takeover=PROGRAMS.takeover_policy)
    reads = engine.counter.count("get")
    for name in ("a", "b"):
        entry = await writer.apply_owned(
            child(namespace, name, owner), owner=owner, live=None, known=True
        )
        assert entry.action == "created"
    assert engine.counter.count("get") - reads == 1
