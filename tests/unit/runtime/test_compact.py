"""The watch cache's compact representation (runtime/compact.py) and its owner index."""

from syncagent.runtime import compact
from syncagent.runtime.cache import Cache, ChangeType
from syncagent.runtime.compact import Objects, owner_uids


def obj(name, ns="ns", rv="1", owners=(), **extra):
    meta = {"name": name, "namespace": ns, "resourceVersion": rv}
    if owners:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "K", "name": f"o-{u}", "uid": u} for u in owners
        ]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, **extra}


MANAGED = [
    {
        "manager": "syncagent",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {".": {}}}}},
    }
]


def test_a_read_returns_the_whole_object_including_managed_fields():
    raw = obj("a", spec={"replicas": 2, "note": "é ✓"})
    raw["metadata"]["managedFields"] = MANAGED
    cache = Cache("deployments")
    cache.upsert(raw)
    assert cache.get("ns", "a") == raw
    assert cache.list("ns") == [raw]


def test_reads_are_fresh_copies_so_a_caller_cannot_change_the_cache():
    cache = Cache("deployments")
    cache.upsert(obj("a", spec={"replicas": 2}))
    first = cache.get("ns", "a")
    first["spec"]["replicas"] = 9
    first["metadata"]["labels"] = {"x": "y"}
    assert cache.get("ns", "a") == obj("a", spec={"replicas": 2})


def test_stored_deflated_against_the_first_object_of_the_kind():
    codec = compact.Compact()
    first = obj("a", spec={"replicas": 2, "template": {"image": "x" * 200}})
    first["metadata"]["managedFields"] = MANAGED
    similar = obj("b", rv="7", spec={"replicas": 3, "template": {"image": "x" * 200}})
    similar["metadata"]["managedFields"] = MANAGED
    other = {"kind": "Unrelated", "metadata": {"name": "z"}, "data": {"k": "é ✓ \u0000"}}
    stored = [codec.store(o) for o in (first, similar, other)]
    assert [codec.load(b) for b in stored] == [first, similar, other]
    # The second object repeats the first: what is kept is a fraction of its JSON.
    assert len(stored[1]) * 4 < len(compact.encode(similar))


def test_an_object_nested_deeper_than_orjson_writes_is_cached_whole():
    # The API server stores a graph with 400 levels under an unknown preserved field (the
    # bad-input fuzz does); the agent must still cache it to report the field.
    deep: dict = {}
    raw = obj("deep", spec=deep)
    for _ in range(400):
        deep["a"] = [{}]
        deep = deep["a"][0]
    cache = Cache("dynamographdeployments")
    cache.upsert(raw)
    assert cache.get("ns", "deep") == raw


def test_owner_index_lists_only_the_children_of_one_owner():
    cache = Cache("deployments")
    cache.upsert(obj("b", owners=["g1"]))
    cache.upsert(obj("a", owners=["g1", "g2"]))
    cache.upsert(obj("c", owners=["g2"]))
    cache.upsert(obj("d", ns="other", owners=["g1"]))
    cache.upsert(obj("e"))
    names = lambda objs: [o["metadata"]["name"] for o in objs]  # noqa: E731
    assert names(cache.list("ns", owner="g1")) == ["a", "b"]
    assert names(cache.list("ns", owner="g2")) == ["a", "c"]
    assert names(cache.list(owner="g1")) == ["a", "b", "d"]
    assert cache.list("ns", owner="missing") == []
    assert sorted(names(cache.list("ns"))) == ["a", "b", "c", "e"]


def test_owner_index_follows_changes_of_owner_and_deletes():
    cache = Cache("deployments")
    cache.upsert(obj("a", owners=["g1"]))
    cache.upsert(obj("a", rv="2", owners=["g2"]))
    assert cache.list("ns", owner="g1") == []
    assert [o["metadata"]["resourceVersion"] for o in cache.list("ns", owner="g2")] == ["2"]
    cache.upsert(obj("a", rv="3"))
    assert cache.list("ns", owner="g2") == []
    cache.upsert(obj("a", rv="4", owners=["g3"]))
    cache.delete(obj("a", rv="5", owners=["g3"]))
    assert cache.list("ns", owner="g3") == []
    assert len(cache) == 0


def test_handlers_see_decoded_old_and_new_objects():
    cache = Cache("deployments")
    changes = []
    cache.add_handler(changes.append)
    cache.upsert(obj("a", owners=["g1"]))
    cache.upsert(obj("a", rv="2", owners=["g2"]))
    cache.delete(obj("a", rv="3"))
    assert [c.type for c in changes] == [ChangeType.ADDED, ChangeType.MODIFIED, ChangeType.DELETED]
    assert changes[1].old == obj("a", owners=["g1"])
    assert changes[1].new == obj("a", rv="2", owners=["g2"])
    assert changes[2].old == obj("a", rv="2", owners=["g2"])


def test_a_relist_stored_page_by_page_deletes_what_it_did_not_see():
    cache = Cache("deployments")
    cache.upsert(obj("gone", owners=["g1"]))
    cache.upsert(obj("kept", owners=["g1"]))
    relist = cache.relist()
    relist.add(obj("early"))
    relist.restart()  # the continue token expired: what it saw before does not count
    relist.add(obj("kept", rv="7", owners=["g1"]))
    relist.finish("9")
    assert cache.keys() == ["ns/kept"]
    assert cache.get("ns", "gone") is None
    assert [o["metadata"]["name"] for o in cache.list("ns", owner="g1")] == ["kept"]
    assert cache.synced
    assert cache.resource_version == "9"


def test_owner_uids_and_objects_count():
    assert owner_uids(obj("a", owners=["x", "y", "x"])) == ("x", "y")
    assert owner_uids(None) == ()
    objects: Objects[str] = Objects()
    objects.put(("ns", "a"), "A", obj("a"))
    objects.put(("ns", "a"), "A2", obj("a"))
    objects.put(("", "cluster"), "C", {"metadata": {"name": "cluster"}})
    assert len(objects) == 2
    assert objects.pop(("ns", "missing")) is None
    assert objects.pop(("ns", "a")) == "A2"
    assert objects.idents() == [("", "cluster")]
