"""A create needs no read first, and never writes over an object it did not look at (issue 16).

A write to an object the caller saw absent carries a resourceVersion no object has
(``certain.CREATE_ONLY``). The real API server ignores it when it creates the object, and refuses
the write with 409 before storing anything when an object of that name exists: an apply
precondition the server checks against the existing object. So the create protocol sends the
create without the GET it used to make, and an object of that name (someone else's, or ours
before the watch cache shows it) fails the create untouched and is then read and decided on.
"""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.ssa import (
    ABSENT,
    ApplyOptions,
    Engine,
    ExistsError,
    OwnershipError,
    controller_of,
)
from syncagent.ssa.certain import CREATE_ONLY
from tests.cluster.support.objects import configmap, deployment, podcliqueset
from tests.cluster.support.owners import create_controlled, holders, owners

MANAGER = "syncagent/tests-create-only"
OBJECTS = {
    "ConfigMap": lambda ns: {**configmap(ns, "c"), "data": {"a": "1"}},
    "Deployment": deployment,
    "PodCliqueSet": podcliqueset,
}


def untouched(before: dict[str, Any], after: dict[str, Any]) -> bool:
    keys = ("resourceVersion", "uid", "managedFields", "ownerReferences")
    return all(before["metadata"].get(k) == after["metadata"].get(k) for k in keys)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", sorted(OBJECTS))
async def test_a_create_only_apply_creates_once_and_is_refused_on_an_existing_object(
    async_client, namespace, kind
):
    engine = Engine(async_client)
    desired = OBJECTS[kind](namespace)
    created = await engine.apply(desired, ApplyOptions(manager=MANAGER), live=ABSENT)
    assert created.action == "created"
    # The server ignored the create-only resourceVersion and gave the object its own.
    assert created.object["metadata"]["resourceVersion"] != CREATE_ONLY
    assert (engine.counter.count("apply"), engine.counter.count("get")) == (1, 0)
    theirs = await engine.apply(desired, ApplyOptions(manager="someone-else", force=True))
    # A second create (a stale "absent") is refused, forced or not, and stores nothing.
    for force in (False, True):
        with pytest.raises(ExistsError, match=rf"^{kind}/{namespace}/\S+: exists"):
            await Engine(async_client).apply(
                desired, ApplyOptions(manager=MANAGER, force=force), live=ABSENT
            )
        assert untouched(theirs.object, await engine.get(desired))


@pytest.mark.anyio
async def test_an_unseen_object_is_created_in_one_request_born_with_its_controller(
    async_client, namespace
):
    engine = Engine(async_client)
    (owner,) = await owners(engine, namespace, "dgd")
    before = engine.counter.snapshot()
    (entry,) = await create_controlled(
        engine,
        deployment(namespace),
        manager=MANAGER,
        controller=owner,
    )
    spent = engine.counter.since(before)
    assert entry.action == "created"
    assert spent.by_verb() == {"apply": 1}  # no GET before the create
    assert controller_of(entry.object) == owner
    assert holders(entry.object) == {MANAGER}


@pytest.mark.anyio
async def test_an_unseen_object_someone_else_controls_is_refused_untouched(async_client, namespace):
    engine = Engine(async_client)
    a, b = await owners(engine, namespace, "a", "b")
    await create_controlled(engine, deployment(namespace), manager="their-operator", controller=a)
    live = await engine.get(deployment(namespace))
    before = engine.counter.snapshot()
    with pytest.raises(
        OwnershipError, match=r'^Deployment/.*/web: is controlled by v1/ConfigMap "a"'
    ):
        await create_controlled(
            engine, deployment(namespace, replicas=5), manager=MANAGER, controller=b
        )
    # The create was refused by the server; then a read, and the control check refused the rest.
    assert engine.counter.since(before).by_verb() == {"apply": 1, "get": 1}
    assert untouched(live, await engine.get(deployment(namespace)))


@pytest.mark.anyio
async def test_an_unseen_object_that_cannot_be_adopted_is_refused_untouched(
    async_client, namespace
):
    # No controller, but another manager owns content: the create must not silently share
    # its fields (a plain apply would have, since equal values do not conflict).
    engine = Engine(async_client)
    (a,) = await owners(engine, namespace, "a")
    theirs = await engine.apply(deployment(namespace), ApplyOptions(manager="helm"), live=ABSENT)
    with pytest.raises(OwnershipError, match=r"cannot adopt it: field manager 'helm'"):
        await create_controlled(engine, deployment(namespace), manager=MANAGER, controller=a)
    assert untouched(theirs.object, await engine.get(deployment(namespace)))


@pytest.mark.anyio
async def test_an_unseen_object_we_control_is_read_and_converged(async_client, namespace):
    # Ours, but not in the caller's cache yet (a watch behind its own create): the refused
    # create costs one request, then the object is read and found converged.
    engine = Engine(async_client)
    (a,) = await owners(engine, namespace, "a")
    await create_controlled(engine, deployment(namespace), manager=MANAGER, controller=a)
    restarted = Engine(async_client)
    entries = await create_controlled(
        restarted, deployment(namespace), manager=MANAGER, controller=a
    )
    assert [e.action for e in entries] == ["unchanged"]
    assert restarted.counter.writes == 1  # the refused create; nothing was stored
    assert restarted.counter.by_verb()["get"] == 1


@pytest.mark.anyio
async def test_where_admission_refuses_create_only_a_create_reads_first_and_keeps_its_refusals(
    async_client, namespace
):
    # The fallback of docs/write-protocol.md §4 (``Engine.create_only`` off): a GET, then an
    # apply without the create-only resourceVersion. An object found is refused as the
    # create-only write refuses it, untouched.
    engine = Engine(async_client)
    engine.create_only = False
    desired = deployment(namespace)
    created = await engine.apply(desired, ApplyOptions(manager="helm"), live=ABSENT)
    assert created.action == "created"
    assert (engine.counter.count("get"), engine.counter.count("apply")) == (1, 1)
    for force in (False, True):
        with pytest.raises(ExistsError, match=rf"^Deployment/{namespace}/web: exists"):
            await engine.apply(desired, ApplyOptions(manager="helm", force=force), live=ABSENT)
    assert untouched(created.object, await engine.get(desired))
    # The create protocol decides on the object found, as after a refused create-only write.
    (a,) = await owners(engine, namespace, "a")
    with pytest.raises(OwnershipError, match=r"cannot adopt it: field manager"):
        await create_controlled(engine, desired, manager=MANAGER, controller=a)
    assert untouched(created.object, await engine.get(desired))
