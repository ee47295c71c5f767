"""When the engine may skip the dry run (``ssa/certain.py``), and how a write targets a UID.

The managedFields entries below are in the API server's own encoding (operation ``Apply``, an
empty ``subresource`` left out), as ``kubectl get -o json`` shows them.
"""

from __future__ import annotations

from syncagent.ssa.certain import holds_entry, sets_fields, with_uid, write_is_certain

DESIRED = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "a", "namespace": "ns"},
    "data": {"x": "1"},
}
EMPTY = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}


def live(*entries: dict, rv: str = "7") -> dict:
    meta = {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": rv}
    return {**DESIRED, "metadata": {**meta, "managedFields": list(entries)}}


MINE = {"manager": "me", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1"}
MINE_STATUS = {**MINE, "subresource": "status"}
UPDATE = {**MINE, "operation": "Update"}


def certain(desired: dict, obj: dict | None, recorded=None, digest="d2", sub="") -> bool:
    return write_is_certain(
        desired, obj, manager="me", subresource=sub, recorded=recorded, digest=digest
    )


def test_an_absent_object_is_a_certain_write():
    assert certain(DESIRED, None)


def test_an_object_without_our_apply_entry_is_a_certain_write():
    assert certain(DESIRED, live(UPDATE))
    assert certain(DESIRED, live(MINE_STATUS))  # a status entry is another subresource
    assert certain(DESIRED, live(MINE), sub="status")


def test_an_empty_apply_adds_no_entry_so_it_is_not_certain():
    assert not sets_fields(EMPTY)
    assert sets_fields({**EMPTY, "metadata": {**EMPTY["metadata"], "labels": {"a": "b"}}})
    assert not certain(EMPTY, live(UPDATE))


def test_a_changed_digest_at_the_recorded_version_is_certain_and_nothing_else_is():
    assert certain(DESIRED, live(MINE, rv="7"), recorded=("d1", "7"), digest="d2")
    assert not certain(DESIRED, live(MINE, rv="7"), recorded=("d2", "7"), digest="d2")
    # Someone else wrote since (or the view is stale): only a dry run can tell.
    assert not certain(DESIRED, live(MINE, rv="8"), recorded=("d1", "7"), digest="d2")
    assert not certain(DESIRED, live(MINE), recorded=None)


def test_holds_entry_matches_manager_operation_and_subresource():
    assert holds_entry(live(MINE), manager="me", subresource="")
    assert not holds_entry(live(MINE), manager="other", subresource="")
    assert not holds_entry(live(UPDATE), manager="me", subresource="")


def test_a_write_to_a_seen_object_carries_its_uid_and_leaves_the_desired_object_alone():
    targeted = with_uid(DESIRED, live(MINE))
    assert targeted["metadata"]["uid"] == "u1"
    assert "uid" not in DESIRED["metadata"]
    assert with_uid(DESIRED, None) is DESIRED


def test_changes_an_apply_would_not_undo_keep_its_record_converged():
    from syncagent.kube.objects import ObjectRef
    from syncagent.ssa.cache import CacheKey, ConvergenceCache, fingerprint

    desired = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "a", "labels": {"a": "1"}},
        "spec": {},
    }
    obj = {
        "metadata": {"uid": "1", "generation": 2, "labels": {"a": "1"}, "resourceVersion": "7"},
        "spec": {},
    }
    key = CacheKey.of(ObjectRef("apps/v1", "Deployment", "a", "ns"), manager="me")
    cache = ConvergenceCache()
    cache.record(key, digest="d", resource_version="7", fingerprint=fingerprint(obj, desired))
    status_only = {**obj, "metadata": {**obj["metadata"], "resourceVersion": "9"}}

    def meta(**changed: object) -> dict:
        return {**status_only, "metadata": {**status_only["metadata"], **changed}}

    relabelled = meta(labels={"a": "2"})
    unlabelled = meta(labels={})
    # the Deployment controller's revision annotation (which bumps a Deployment's generation)
    theirs = meta(
        generation=3,
        labels={"a": "1", "b": "x"},
        annotations={"deployment.kubernetes.io/revision": "1"},
    )
    respec = {**meta(generation=3), "spec": {"replicas": 2}}
    # another owner's reference item: a co-owner joining (desired names no owner here)
    joined = meta(ownerReferences=[{"uid": "u"}])
    recreated = meta(uid="2", generation=1)
    for view, converged in (
        (status_only, True),
        (theirs, True),
        (relabelled, False),
        (unlabelled, False),
        (respec, False),
        (joined, True),
        (recreated, False),
    ):
        asked = cache.converged(
            key,
            digest="d",
            resource_version="9",
            fingerprint=lambda v=view: fingerprint(v, desired),
        )
        assert asked is converged

    def unasked() -> str:
        raise AssertionError("fingerprint computed although the resourceVersion is recorded")

    # At the recorded resourceVersion (every object of a converged resync) nothing is hashed.
    assert cache.converged(key, digest="d", resource_version="7", fingerprint=unasked)
    # Whatever the desired object sets counts (a Role's rules, a ConfigMap's data), and only
    # that; a status apply has no fingerprint (other writers share the status).
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "rules": [{"verbs": ["get"]}],
    }
    granted = {"metadata": {"resourceVersion": "3"}, "rules": [{"verbs": ["get"]}]}
    widened = {**granted, "rules": [{"verbs": ["get", "list"]}]}
    assert fingerprint(granted, role) == fingerprint({**granted, "extra": 1}, role)
    assert fingerprint(granted, role) != fingerprint(widened, role)
    assert fingerprint(obj, desired, subresource="status") == ""
    # The items of the owners the desired object names count, value for value; others do not.
    mine = {"uid": "me", "controller": True}
    owned = {**desired, "metadata": {**desired["metadata"], "ownerReferences": [mine]}}
    live_owned = meta(ownerReferences=[mine])
    co_owned = meta(ownerReferences=[mine, {"uid": "u"}])
    demoted = meta(ownerReferences=[{"uid": "me"}])
    orphaned = meta(ownerReferences=[{"uid": "u"}])
    assert fingerprint(live_owned, owned) == fingerprint(co_owned, owned)
    assert fingerprint(live_owned, owned) != fingerprint(demoted, owned)
    assert fingerprint(live_owned, owned) != fingerprint(orphaned, owned)


def test_a_record_of_a_yielded_apply_proves_no_certain_write():
    # Paths left to another manager during a fight: the recorded digest is not the caller's
    # whole intent, so a later apply asks a dry run (and the fight hook) instead of writing.
    from syncagent.kube.objects import ObjectRef
    from syncagent.ssa.cache import CacheKey, ConvergenceCache

    key = CacheKey.of(ObjectRef("v1", "ConfigMap", "a", "ns"), manager="me")
    cache = ConvergenceCache()
    cache.record(key, digest="pruned", resource_version="7", partial=True)
    assert cache.recorded(key) is None
    assert not certain(DESIRED, live(MINE, rv="7"), recorded=cache.recorded(key), digest="full")
