"""Store.list narrowed by owner UID and by label selector, over watch caches and dicts."""

import pytest

from syncagent.programs.view import CacheStore, DictStore, matches
from syncagent.runtime.cache import Cache


def sa(name, labels=None, owner=None):
    meta = {"name": name, "namespace": "ns", "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": owner}]
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}


POD = "nvidia.com/dynamo-component-pod=true"


def stores():
    pods, identities = Cache("pods"), Cache("identities")
    pods.upsert(sa("runner", {"nvidia.com/dynamo-component-pod": "true"}))
    identities.upsert(sa("g1-sa", {"managed": "yes"}, owner="g1"))
    identities.upsert(sa("g2-sa", {"managed": "yes"}, owner="g2"))
    caches = CacheStore()
    caches.add("ServiceAccount", pods, selector=POD)
    caches.add("ServiceAccount", identities, selector="managed=yes")
    dicts = DictStore({"ServiceAccount": [*pods.list(), *identities.list()]})
    return caches, dicts


@pytest.mark.parametrize("which", [0, 1])
def test_list_by_selector_and_owner(which):
    store = stores()[which]
    names = lambda objs: sorted(o["metadata"]["name"] for o in objs)  # noqa: E731
    assert names(store.list("ServiceAccount", "ns")) == ["g1-sa", "g2-sa", "runner"]
    assert names(store.list("ServiceAccount", "ns", selector=POD)) == ["runner"]
    assert names(store.list("ServiceAccount", "ns", owner="g2")) == ["g2-sa"]
    assert names(store.list("ServiceAccount", "ns", selector="managed=yes", owner="g1")) == [
        "g1-sa"
    ]
    # A selector no cache was watched with: every cache of the kind, filtered.
    assert names(store.list("ServiceAccount", "ns", selector="managed=yes,missing=x")) == []
    assert store.list("ServiceAccount", "other") == []


def test_matches_equality_selectors_only():
    obj = sa("a", {"a": "1", "b": "2"})
    assert matches(obj, None)
    assert matches(obj, "a=1, b=2")
    assert not matches(obj, "a=2")
    with pytest.raises(ValueError, match="equality selectors"):
        matches(obj, "a in (1)")
