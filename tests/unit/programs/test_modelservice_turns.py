"""Co-owners of a model Service take turns, each deciding on what the last one left
(docs/ownership.md §4). The writes themselves are the cluster tier's
(tests/cluster/test_migration_writes.py)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel

from syncagent.programs import modelservice
from syncagent.programs.view import DictStore

NS, NAME = "ns", "dynamo-model-fb68f5a6"


def svc(version: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": NS, "resourceVersion": version},
    }


def versions(store: DictStore, written: list[str | None]) -> list[str]:
    """Each of ``written`` (what a turn's write returned, None: no write) in its own turn, all
    started at once; the version each turn was given to decide on, in turn order."""
    seen: list[str] = []

    async def one(write: str | None) -> None:
        async with modelservice.turn(store, NS, NAME) as held:
            seen.append(held.view["metadata"]["resourceVersion"] if held.view else "")
            await anyio.lowlevel.checkpoint()  # a write: the others wait for their turn
            if write is not None:
                held.left = svc(write)

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            for write in written:
                tasks.start_soon(one, write)

    anyio.run(main)
    return seen


def test_a_turn_decides_on_what_the_previous_turn_wrote():
    store = DictStore({"Service": [svc("1")]})
    # The cache still shows version 1 throughout. A turn that wrote nothing passes nothing on:
    # what another writer outside the agent changed meanwhile is then seen as the cache has it.
    assert versions(store, ["2", "3", None, None]) == ["1", "2", "3", "1"]


def test_a_cache_that_caught_up_is_used():
    store = DictStore({"Service": [svc("1")]})
    assert versions(store, ["2"]) == ["1"]
    store.objects["Service"] = [svc("2")]
    assert versions(store, [None]) == ["2"]


def test_a_created_service_is_seen_before_the_cache_has_it():
    store = DictStore({})
    assert versions(store, ["5", None]) == ["", "5"]


def test_no_lock_is_kept_once_every_turn_ended():
    store = DictStore({"Service": [svc("1")]})
    versions(store, ["2", None, None])
    assert modelservice._TURNS[store].locks == {}


def test_each_store_has_turns_of_its_own():
    first, second = DictStore({"Service": [svc("1")]}), DictStore({"Service": [svc("7")]})
    assert versions(first, ["2"]) == ["1"]
    assert versions(second, [None]) == ["7"]
