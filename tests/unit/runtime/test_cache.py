import pytest

from syncagent.kube.kinds import DEPLOYMENT, SERVICE
from syncagent.runtime.cache import (
    Cache,
    Change,
    ChangeType,
    beyond_status,
    controller_owner_key,
    enqueue,
    label_key,
    owner_keys,
    self_key,
    split_key,
)
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.watch import (
    Gone,
    Informer,
    WatchEvent,
    WatchStatusError,
    WatchTarget,
    decode_event,
)


def obj(name, ns="ns", rv="1", owners=(), labels=None, **extra):
    meta = {"name": name, "namespace": ns, "resourceVersion": rv}
    if owners:
        meta["ownerReferences"] = list(owners)
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, **extra}


def ref(kind, name, controller=True, api="nvidia.com/v1beta1"):
    return {"apiVersion": api, "kind": kind, "name": name, "uid": "u", "controller": controller}


def test_upsert_delete_and_notifications():
    cache = Cache("deployments")
    changes = []
    cache.add_handler(changes.append)
    cache.upsert(obj("a"))
    cache.upsert(obj("a", rv="2"))
    cache.delete(obj("a", rv="3"))
    assert [c.type for c in changes] == [ChangeType.ADDED, ChangeType.MODIFIED, ChangeType.DELETED]
    assert changes[1].old["metadata"]["resourceVersion"] == "1"
    assert changes[2].old["metadata"]["resourceVersion"] == "2"
    assert cache.get("ns", "a") is None


def test_replace_reports_vanished_objects_as_deleted_and_marks_synced():
    cache = Cache("deployments")
    cache.upsert(obj("a"))
    cache.upsert(obj("b"))
    changes = []
    cache.add_handler(changes.append)
    assert not cache.synced
    cache.replace([obj("b", rv="5"), obj("c", rv="6")], "10")
    assert cache.synced
    assert cache.resource_version == "10"
    assert sorted(cache.keys()) == ["ns/b", "ns/c"]
    kinds = {(c.name, c.type) for c in changes}
    assert kinds == {("b", ChangeType.MODIFIED), ("c", ChangeType.ADDED), ("a", ChangeType.DELETED)}


def test_list_by_namespace_and_transform():
    cache = Cache("deployments", transform=lambda raw: raw["metadata"]["resourceVersion"])
    cache.upsert(obj("a", ns="x", rv="1"))
    cache.upsert(obj("b", ns="y", rv="2"))
    assert cache.get("x", "a") == "1"
    assert cache.list("y") == ["2"]
    assert sorted(cache.list()) == ["1", "2"]


def test_clear_reports_deletes_and_unsyncs():
    cache = Cache("x")
    cache.replace([obj("a")], "1")
    changes = []
    cache.add_handler(changes.append)
    cache.clear()
    assert [c.type for c in changes] == [ChangeType.DELETED]
    assert not cache.synced
    assert len(cache) == 0


def test_handler_errors_do_not_stop_other_handlers():
    cache = Cache("x")
    seen = []
    cache.add_handler(lambda c: 1 / 0)
    cache.add_handler(seen.append)
    cache.upsert(obj("a"))
    assert len(seen) == 1


def test_key_functions():
    o = obj(
        "w",
        owners=[
            ref("DynamoComponentDeployment", "dcd", controller=False),
            ref("DynamoGraphDeployment", "g"),
        ],
        labels={"nvidia.com/dynamo-graph-deployment-name": "g2"},
    )
    assert self_key(o) == ["ns/w"]
    assert controller_owner_key("DynamoGraphDeployment")(o) == ["ns/g"]
    assert controller_owner_key("DynamoComponentDeployment")(o) == []
    assert controller_owner_key("DynamoGraphDeployment", api_group="other.io")(o) == []
    assert controller_owner_key("DynamoGraphDeployment", api_group="nvidia.com")(o) == ["ns/g"]
    assert owner_keys("DynamoComponentDeployment")(o) == ["ns/dcd"]
    assert label_key("nvidia.com/dynamo-graph-deployment-name")(o) == ["ns/g2"]
    assert label_key("missing")(o) == []
    assert split_key("ns/name") == ("ns", "name")
    assert split_key("cluster-scoped") == ("", "cluster-scoped")


def test_enqueue_maps_old_and_new_owner():
    cache = Cache("x")
    added = []
    cache.add_handler(enqueue(added.append, controller_owner_key("DynamoGraphDeployment")))
    cache.upsert(obj("w", owners=[ref("DynamoGraphDeployment", "old")]))
    added.clear()
    cache.upsert(obj("w", rv="2", owners=[ref("DynamoGraphDeployment", "new")]))
    assert added == ["ns/new", "ns/old"]
    added.clear()
    cache.delete(obj("w", rv="3", owners=[ref("DynamoGraphDeployment", "new")]))
    assert added == ["ns/new"]


def informer():
    return Informer(None, WatchTarget(DEPLOYMENT), metrics=Metrics())


def test_informer_handles_events_and_bookmarks():
    inf = informer()
    inf.handle(WatchEvent("ADDED", obj("a", rv="5")))
    assert inf.resource_version == "5"
    inf.handle(WatchEvent("BOOKMARK", {"kind": "Deployment", "metadata": {"resourceVersion": "9"}}))
    assert inf.resource_version == "9"
    assert inf.cache.keys() == ["ns/a"]  # a bookmark is not an object
    inf.handle(WatchEvent("MODIFIED", obj("a", rv="11")))
    inf.handle(WatchEvent("DELETED", obj("a", rv="12")))
    assert inf.resource_version == "12"
    assert len(inf.cache) == 0


def test_informer_error_events():
    inf = informer()
    with pytest.raises(Gone):
        inf.handle(WatchEvent("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"}))
    with pytest.raises(WatchStatusError, match="internal"):
        inf.handle(WatchEvent("ERROR", {"kind": "Status", "code": 500, "message": "internal"}))


def test_decode_event():
    ev = decode_event(b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}')
    assert ev.type == "ADDED"
    assert ev.object["metadata"]["name"] == "a"


def test_watch_target_requests_carry_its_namespace_and_selectors():
    target = WatchTarget(SERVICE, namespace="ns", label_selector="a=1", field_selector="b=2")
    listed = target.request("list", {"limit": "500"})
    assert (listed.method, listed.path) == ("GET", "/api/v1/namespaces/ns/services")
    assert listed.params == {"labelSelector": "a=1", "fieldSelector": "b=2", "limit": "500"}
    watched = target.request("watch", {"resourceVersion": "7"})
    assert watched.params["watch"] == "true"
    assert watched.params["resourceVersion"] == "7"
    assert WatchTarget(DEPLOYMENT).request("list", {}).path == "/apis/apps/v1/deployments"


def test_watch_target_of_lightkube_resources():
    from lightkube.resources.apps_v1 import Deployment
    from lightkube.resources.core_v1 import Namespace

    t = WatchTarget.of(Deployment, namespace="ns", labels={"b": "2", "a": "1"})
    assert t.resource == DEPLOYMENT
    assert t.resource.kind == "Deployment"
    assert t.request("list", {}).path == "/apis/apps/v1/namespaces/ns/deployments"
    assert t.label_selector == "a=1,b=2"
    assert not WatchTarget.of(Namespace).resource.namespaced


def test_beyond_status_drops_status_only_changes_and_keeps_the_rest():
    seen = []
    handle = beyond_status(seen.append)
    base = obj("g", rv="1", status={"state": "pending"})
    base["metadata"]["generation"] = 3

    def changed(**meta):
        new = {**base, "metadata": {**base["metadata"], "resourceVersion": "2", **meta}}
        return Change(ChangeType.MODIFIED, "ns", "g", base, new)

    status_only = changed()
    status_only.new["status"] = {"state": "successful"}
    handle(status_only)
    handle(changed(managedFields=[{"manager": "syncagent/status"}]))
    assert seen == []
    waking = [
        Change(ChangeType.ADDED, "ns", "g", None, base),
        Change(ChangeType.DELETED, "ns", "g", base, None),
        changed(generation=4),
        changed(annotations={"nvidia.com/enable-grove": "false"}),
        changed(labels={"team": "a"}),
        changed(finalizers=["x"]),
        changed(deletionTimestamp="2026-12-02T00:00:00Z"),
        changed(ownerReferences=[{"uid": "u"}]),
    ]
    for change in waking:
        handle(change)
    assert seen == waking
