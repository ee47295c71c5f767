"""The engine's request sequence, against an in-memory stand-in for the API server.

The stand-in is deliberately crude (no real merge); the cluster tests prove SSA behaviour. Here
we check what the engine asks for: no request on a cache hit, a non-forced dry run before a
forced write, no write when the dry run shows no change, writes in input order.
"""

import copy
import json

import httpx2
import orjson
import pytest

from syncagent.ssa import ABSENT, ApplyOptions, ConflictError, Engine, PreconditionError
from syncagent.ssa.certain import CREATE_ONLY
from tests.support.fakeapi import FakeApi

PATH = "/api/v1/namespaces/ns/configmaps/"
CONFLICT = {
    "kind": "Status",
    "code": 409,
    "reason": "Conflict",
    "message": "Apply failed with 1 conflict",
    "details": {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "field": ".data.a",
                "message": 'conflict with "editor" using v1',
            }
        ]
    },
}


class FakeServer(FakeApi):
    def __init__(self):
        super().__init__()
        self.objects: dict[str, dict] = {}
        self.rv = 100
        self.log: list[tuple[str, str, dict]] = []
        self.bodies: list[dict | None] = []
        self.conflict_unless_forced = False

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        params = dict(request.url.params)
        name = request.url.path.rsplit("/", 1)[-1]
        self.log.append((request.method, name, params))
        self.bodies.append(orjson.loads(request.content) if request.content else None)
        if request.method == "GET":
            obj = self.objects.get(name)
            return (
                httpx2.Response(200, json=obj)
                if obj
                else httpx2.Response(
                    404, json={"kind": "Status", "code": 404, "reason": "NotFound"}
                )
            )
        if request.method == "DELETE":
            body = json.loads(request.content)
            obj = self.objects.get(name)
            if obj is None:
                return httpx2.Response(404, json={"code": 404, "reason": "NotFound"})
            if obj["metadata"]["uid"] != body["preconditions"]["uid"]:
                return httpx2.Response(
                    409,
                    json={"code": 409, "reason": "Conflict", "message": "Precondition failed: UID"},
                )
            self.objects.pop(name, None)
            return httpx2.Response(200, json={"kind": "Status", "status": "Success"})
        return self._apply(name, orjson.loads(request.content), params)

    def _apply(self, name, body, params):
        if self.conflict_unless_forced and params.get("force") != "true":
            return httpx2.Response(409, json=CONFLICT)
        current = self.objects.get(name)
        merged = (
            copy.deepcopy(current)
            if current
            else {"metadata": {"uid": f"uid-{name}", "creationTimestamp": "now"}}
        )
        merged["apiVersion"], merged["kind"] = body["apiVersion"], body["kind"]
        merged["metadata"].update({k: v for k, v in body["metadata"].items()})
        merged["data"] = body.get("data", {})
        merged["metadata"]["managedFields"] = [
            {
                "manager": params["fieldManager"],
                "operation": "Apply",
                "fieldsV1": {"f:data": {f"f:{k}": {} for k in merged["data"]}},
            }
        ]
        if params.get("dryRun") == "All":
            if current:
                merged["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            return httpx2.Response(200, json=merged)
        if current != merged or current is None:
            self.rv += 1
            merged["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[name] = merged
        return httpx2.Response(201 if current is None else 200, json=merged)

    def real_applies(self):
        return [name for method, name, p in self.log if method == "PATCH" and "dryRun" not in p]


def cm(name="c", **data):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": data or {"a": "1"},
    }


@pytest.fixture
def server():
    return FakeServer()


@pytest.fixture
def engine(server):
    return Engine(server.client())


@pytest.mark.anyio
async def test_create_then_cache_hit_makes_no_request(server, engine):
    first = await engine.apply(cm(), ApplyOptions(manager="m"))
    assert first.action == "created"
    # Our own GET found nothing: no dry run before the create.
    assert [(m, p.get("dryRun")) for m, _, p in server.log] == [("GET", None), ("PATCH", None)]
    before = engine.counter.total
    third = await engine.apply(cm(), ApplyOptions(manager="m"), live=first.object)
    assert third.action == "unchanged"
    assert engine.counter.total == before
    assert third.object == first.object


@pytest.mark.anyio
async def test_unchanged_dry_run_writes_nothing_and_then_caches(server, engine):
    await engine.apply(cm(), ApplyOptions(manager="m"))
    engine.cache = type(engine.cache)()  # a fresh process: nothing cached yet
    server.log.clear()
    entry = await engine.apply(cm(), ApplyOptions(manager="m"))
    assert entry.action == "unchanged"
    assert server.real_applies() == []
    assert engine.counter.count("apply", dry_run=True) == 1
    server.log.clear()
    await engine.apply(cm(), ApplyOptions(manager="m"), live=entry.object)
    assert server.log == []


@pytest.mark.anyio
async def test_change_is_configured(server, engine):
    created = await engine.apply(cm(), ApplyOptions(manager="m"))
    entry = await engine.apply(cm(a="2"), ApplyOptions(manager="m"), live=created.object)
    assert entry.action == "configured"
    assert entry.differences == (".data",)
    assert server.objects["c"]["data"] == {"a": "2"}


@pytest.mark.anyio
async def test_a_changed_desired_object_is_written_non_forced_then_forced_on_conflict(
    server, engine
):
    # Our own desired object changed at the version we converged: the write is certain, so
    # the non-forced write itself finds the conflicts (docs/write-protocol.md), no dry run.
    await engine.apply(cm(), ApplyOptions(manager="m"))
    server.conflict_unless_forced = True
    server.log.clear()
    entry = await engine.apply(cm(a="2"), ApplyOptions(manager="m", force=True))
    assert [c.path for c in entry.conflicts] == [".data.a"]
    assert entry.conflicts[0].manager == "editor"
    patches = [(p.get("dryRun"), p.get("force")) for m, _, p in server.log if m == "PATCH"]
    assert patches == [(None, None), (None, "true")]


@pytest.mark.anyio
async def test_non_forced_conflict_raises(server, engine):
    await engine.apply(cm(), ApplyOptions(manager="m"))
    server.conflict_unless_forced = True
    with pytest.raises(ConflictError) as err:
        await engine.apply(cm(a="2"), ApplyOptions(manager="m"))
    assert str(err.value).startswith("ConfigMap/ns/c: ")
    # The non-forced write was refused: nothing changed, and nothing was forced (the create
    # before it was: nobody owns a field of an object that does not exist yet).
    assert server.objects["c"]["data"] == {"a": "1"}
    assert [p.get("force") for m, _, p in server.log if m == "PATCH"] == ["true", None]


@pytest.mark.anyio
async def test_stale_live_view_is_refreshed(server, engine):
    created = await engine.apply(cm(), ApplyOptions(manager="m"))
    stale = copy.deepcopy(created.object)
    stale["metadata"]["resourceVersion"] = "1"
    stale["data"] = {"a": "old"}
    server.log.clear()
    entry = await engine.apply(cm(), ApplyOptions(manager="m"), live=stale)
    assert entry.action == "unchanged"
    assert [m for m, _, _ in server.log] == ["PATCH", "GET"]


@pytest.mark.anyio
async def test_absent_marker_skips_the_get(server, engine):
    entry = await engine.apply(cm(), ApplyOptions(manager="m"), live=ABSENT)
    assert entry.action == "created"
    # A create is a certain write: one forced, create-only apply (a stale "absent" comes back
    # as a failed precondition, test_ssa_create_only.py), no dry run.
    assert [(m, p.get("dryRun"), p.get("force")) for m, _, p in server.log] == [
        ("PATCH", None, "true")
    ]
    assert server.bodies[-1]["metadata"]["resourceVersion"] == CREATE_ONLY


@pytest.mark.anyio
async def test_apply_all_writes_in_input_order(server, engine):
    names = [f"c{i}" for i in range(12)]
    entries = await engine.apply_all(
        [cm(n) for n in names], ApplyOptions(manager="m"), concurrency=4
    )
    assert [e.subject for e in entries] == [f"ConfigMap/ns/{n}" for n in names]
    assert server.real_applies() == names
    assert {e.action for e in entries} == {"created"}
    again = await engine.apply_all(
        [cm(n) for n in names],
        ApplyOptions(manager="m"),
        live={e.subject: e.object for e in entries},
    )
    assert {e.action for e in again} == {"unchanged"}


@pytest.mark.anyio
async def test_preview_never_writes(server, engine):
    entry = await engine.preview(cm(), ApplyOptions(manager="m"))
    assert entry.action == "created"
    assert entry.dry_run
    assert server.real_applies() == []


@pytest.mark.anyio
async def test_delete_carries_uid_precondition(server, engine):
    created = await engine.apply(cm(), ApplyOptions(manager="m"))
    with pytest.raises(PreconditionError):
        await engine.delete(cm(), uid="someone-else")
    assert await engine.delete(cm(), uid=created.object["metadata"]["uid"])
    assert not await engine.delete(cm(), uid=created.object["metadata"]["uid"])


@pytest.mark.anyio
async def test_forced_preview_reports_conflicts_and_shows_the_forced_result(server, engine):
    await engine.apply(cm(), ApplyOptions(manager="m"))
    server.conflict_unless_forced = True
    server.log.clear()
    entry = await engine.preview(cm(a="2"), ApplyOptions(manager="m", force=True))
    assert entry.dry_run
    assert entry.action == "configured"
    assert [c.path for c in entry.conflicts] == [".data.a"]
    assert entry.object["data"] == {"a": "2"}
    assert server.real_applies() == []
    assert server.objects["c"]["data"] == {"a": "1"}
