"""Acceptance 3: owner references written through SSA, never missing, never clobbered."""

from __future__ import annotations

import anyio
import pytest
from lightkube.resources.apps_v1 import Deployment

from fieldmanagers import for_owner, ownership, services
from syncagent.programs.ownership import SCHEME
from syncagent.ssa import (
    ABSENT,
    ApplyOptions,
    Engine,
    OwnerRef,
    OwnershipError,
    controller_of,
    is_adoptable,
    join,
    leave,
    set_controller,
)
from syncagent.ssa.ownership import with_references
from tests.cluster.support.objects import deployment, refs_of, service
from tests.cluster.support.owners import co_own, create_controlled, holders, owners

WORKLOADS = "syncagent/tests-workloads"
OWNERSHIP = ownership.MANAGER.name


async def watched_create(
    typed_client, namespace: str, engine: Engine, controller: OwnerRef, *, shared: bool
) -> tuple[list, list[tuple[str, list[dict]]]]:
    """``apply_controlled`` of a new Deployment, with every version a watch saw of it."""
    seen: list[tuple[str, list[dict]]] = []
    listed, reached = anyio.Event(), anyio.Event()
    target: list[str] = []

    async def watch() -> None:
        listing = typed_client.list(Deployment, namespace=namespace)
        async for _ in listing:
            pass
        stream = typed_client.watch(
            Deployment, namespace=namespace, resource_version=listing.resourceVersion
        )
        listed.set()
        async for _, obj in stream:
            refs = [r.to_dict() for r in obj.metadata.ownerReferences or []]
            seen.append((obj.metadata.resourceVersion, refs))
            if obj.metadata.resourceVersion in target:
                reached.set()

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await listed.wait()
            created = await create_controlled(
                engine,
                deployment(namespace),
                manager=WORKLOADS,
                controller=controller,
                shared=shared,
            )
            target.append(created[-1].resource_version)
            if target[0] not in [rv for rv, _ in seen]:
                await reached.wait()
            group.cancel_scope.cancel()
    return created, seen


@pytest.mark.anyio
async def test_create_is_one_write_born_with_the_reference_and_converged_after(
    async_client, typed_client, namespace
):
    # docs/write-protocol.md (supersedes routing.md §3 example 8): one content apply carrying
    # the controller reference; its content manager keeps it.
    engine = Engine(async_client)
    (controller,) = await owners(engine, namespace, "dgd")
    writes, dry_runs = engine.counter.writes, engine.counter.count(dry_run=True)
    created, seen = await watched_create(typed_client, namespace, engine, controller, shared=False)
    assert [(e.manager, e.action) for e in created] == [(WORKLOADS, "created")]
    # One write, no dry run.
    assert (engine.counter.writes, engine.counter.count(dry_run=True)) == (writes + 1, dry_runs)
    assert len(seen) == 1
    assert [(r["uid"], r.get("controller")) for r in seen[0][1]] == [(controller.uid, True)]
    assert holders(created[0].object) == {WORKLOADS}
    # The next reconcile is converged: no request at all; after a restart (a new engine, no
    # cache), one dry run and no write.
    for eng, requests in ((engine, 0), (Engine(async_client), 1)):
        live = await Engine(async_client).read(deployment(namespace))
        total, writes = eng.counter.total, eng.counter.writes
        again = await create_controlled(
            eng, deployment(namespace), manager=WORKLOADS, controller=controller, live=live
        )
        assert [e.action for e in again] == ["unchanged"]
        assert (eng.counter.total - total, eng.counter.writes - writes) == (requests, 0)


@pytest.mark.anyio
async def test_shared_create_hands_the_reference_to_the_ownership_manager(
    async_client, typed_client, namespace
):
    engine = Engine(async_client)
    (controller,) = await owners(engine, namespace, "dgd")
    created, seen = await watched_create(typed_client, namespace, engine, controller, shared=True)
    # Content with the reference, ownership apply, content without the reference.
    assert [(e.manager, e.action) for e in created] == [
        (WORKLOADS, "created"),
        (OWNERSHIP, "configured"),
        (WORKLOADS, "configured"),
    ]
    assert len(seen) == 3  # one event per write
    for _, refs in seen:
        assert [(r["uid"], r.get("controller")) for r in refs] == [(controller.uid, True)]
    assert holders(created[-1].object) == {OWNERSHIP}
    writes = engine.counter.writes
    again = await create_controlled(
        engine,
        deployment(namespace),
        manager=WORKLOADS,
        controller=controller,
        shared=True,
        live=created[-1].object,
    )
    assert [e.action for e in again] == ["unchanged"]
    assert engine.counter.writes == writes


@pytest.mark.anyio
async def test_handoff_is_one_ownership_apply_and_keeps_other_owners(async_client, namespace):
    engine = Engine(async_client)
    a, b, c = await owners(engine, namespace, "a", "b", "c")
    desired = service(namespace)
    await create_controlled(
        engine, desired, manager=services.MANAGER.name, controller=a, shared=True
    )
    third_party = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "web",
            "namespace": namespace,
            "ownerReferences": [c.item(controller=False)],
        },
    }
    await engine.apply(third_party, ApplyOptions(manager="third-party"))
    writes = engine.counter.writes
    entry = await set_controller(engine, desired, controller=b, scheme=SCHEME)
    assert entry.action == "configured"
    assert engine.counter.writes == writes + 1
    refs = refs_of(entry.object)
    assert sorted((r["name"], bool(r.get("controller"))) for r in refs) == [
        ("b", True),
        ("c", False),
    ]
    assert controller_of(entry.object) == b


@pytest.mark.anyio
async def test_handoff_refused_while_content_still_holds_the_old_reference(async_client, namespace):
    engine = Engine(async_client)
    a, b = await owners(engine, namespace, "a", "b")
    # A create interrupted after its first two writes: the content manager still holds A's
    # reference, so an ownership apply alone could not remove it.
    await engine.apply(
        with_references(service(namespace), a.item(controller=True)),
        ApplyOptions(manager=services.MANAGER.name),
        live=ABSENT,
    )
    await set_controller(engine, service(namespace), controller=a, scheme=SCHEME)
    with pytest.raises(OwnershipError, match=r"^Service/.*/web: .*syncagent/services"):
        await set_controller(engine, service(namespace), controller=b, scheme=SCHEME)
    assert controller_of(await engine.get(service(namespace))) == a


@pytest.mark.anyio
async def test_co_owners_keep_their_items_and_leave_exactly_their_own(async_client, namespace):
    engine = Engine(async_client)
    a, b = await owners(engine, namespace, "a", "b")
    desired = service(namespace, "dynamo-model-abc")
    content = services.MANAGER.name
    # Owner A creates the shared Service and controls it; both owners write their own item.
    await co_own(engine, desired, first=a, second=b)
    # Each owner re-applies the same content and its own item: both items stay.
    for who in (a, b):
        await engine.apply(desired, ApplyOptions(manager=content))
        entry = await join(engine, desired, owner=who, scheme=SCHEME)
        assert sorted(r["uid"] for r in refs_of(entry.object)) == sorted([a.uid, b.uid])
    live = await engine.get(desired)
    assert {for_owner(a.uid).name, for_owner(b.uid).name, OWNERSHIP} <= holders(live)

    left = await leave(engine, desired, owner_uid=b.uid, scheme=SCHEME)
    assert left.action == "configured"
    assert [(r["uid"], r.get("controller")) for r in refs_of(left.object)] == [(a.uid, True)]
    assert for_owner(b.uid).name not in holders(left.object)
    again = await leave(engine, desired, owner_uid=b.uid, scheme=SCHEME)
    assert again.action == "unchanged"


@pytest.mark.anyio
async def test_control_moves_between_co_owners_without_losing_an_item(async_client, namespace):
    engine = Engine(async_client)
    a, b = await owners(engine, namespace, "a", "b")
    desired = service(namespace, "dynamo-model-abc")
    await co_own(engine, desired, first=a, second=b)
    with pytest.raises(OwnershipError, match=r"^Service/.*: owner .* controls the object"):
        await leave(engine, desired, owner_uid=a.uid, scheme=SCHEME)

    await set_controller(engine, desired, controller=b, scheme=SCHEME)
    live = await engine.get(desired)
    assert sorted((r["name"], bool(r.get("controller"))) for r in refs_of(live)) == [
        ("a", False),
        ("b", True),
    ]
    # Each owner still holds its own item, so re-applies keep both and A can leave alone.
    for who in (a, b):
        entry = await join(engine, desired, owner=who, scheme=SCHEME)
        assert entry.action == "unchanged"
    left = await leave(engine, desired, owner_uid=a.uid, scheme=SCHEME)
    assert [(r["uid"], r.get("controller")) for r in refs_of(left.object)] == [(b.uid, True)]


@pytest.mark.anyio
async def test_refuses_an_object_controlled_by_someone_else(async_client, namespace):
    engine = Engine(async_client)
    a, b = await owners(engine, namespace, "a", "b")
    await create_controlled(engine, deployment(namespace), manager=WORKLOADS, controller=a)
    live = await engine.get(deployment(namespace))
    writes = engine.counter.writes
    with pytest.raises(
        OwnershipError, match=r'^Deployment/.*/web: is controlled by v1/ConfigMap "a"'
    ):
        await create_controlled(
            engine, deployment(namespace, replicas=5), manager=WORKLOADS, controller=b
        )
    # One write request: the create-only apply, which the server refused (nothing stored:
    # test_ssa_create_only.py); then the object was read and the control check refused.
    assert engine.counter.writes == writes + 1
    assert (await engine.get(deployment(namespace)))["metadata"]["resourceVersion"] == (
        live["metadata"]["resourceVersion"]
    )


@pytest.mark.anyio
async def test_adopts_after_a_crash_between_the_create_writes(async_client, client, namespace):
    engine = Engine(async_client)
    (a,) = await owners(engine, namespace, "a")
    # Our content apply happened without any reference, then a controller wrote status and a
    # finalizer bot added a finalizer.
    await engine.apply(deployment(namespace), ApplyOptions(manager=WORKLOADS), live=ABSENT)
    client.patch(
        Deployment,
        "web",
        {"metadata": {"finalizers": ["example.com/hold"]}},
        namespace=namespace,
        field_manager="finalizer-bot",
    )
    client.patch(
        Deployment.Status,
        "web",
        {"status": {"observedGeneration": 1}},
        namespace=namespace,
        field_manager="some-controller",
    )
    live = await engine.get(deployment(namespace))
    assert is_adoptable(live, scheme=SCHEME)
    entries = await create_controlled(
        engine, deployment(namespace), manager=WORKLOADS, controller=a, live=live
    )
    assert [e.action for e in entries] == ["configured", "unchanged"]
    assert controller_of(entries[1].object) == a
    client.patch(
        Deployment,
        "web",
        {"metadata": {"finalizers": None}},
        namespace=namespace,
        field_manager="finalizer-bot",
    )


@pytest.mark.anyio
async def test_not_adoptable_when_someone_else_wrote_content(async_client, client, namespace):
    engine = Engine(async_client)
    (a,) = await owners(engine, namespace, "a")
    await engine.apply(deployment(namespace), ApplyOptions(manager="helm"), live=ABSENT)
    with pytest.raises(OwnershipError, match=r"cannot adopt it: field manager 'helm'"):
        await create_controlled(engine, deployment(namespace), manager=WORKLOADS, controller=a)
    assert controller_of(await engine.get(deployment(namespace))) is None
