import pytest

from syncagent.programs.ownership import SCHEME
from syncagent.ssa.errors import OwnershipError
from syncagent.ssa.ownership import (
    OwnerRef,
    adoption_blockers,
    controller_of,
    is_adoptable,
    old_controller_to_release,
    owner_of,
    skeleton,
    with_references,
)

SUBJECT = "Service/ns/s"
A = OwnerRef("v1", "ConfigMap", "a", "uid-a")
B = OwnerRef("v1", "ConfigMap", "b", "uid-b")


def live(*, refs=(), entries=()):
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "s",
            "namespace": "ns",
            "ownerReferences": list(refs),
            "managedFields": list(entries),
        },
    }


def entry(manager, fields, *, subresource=None, operation="Update"):
    raw = {"manager": manager, "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        raw["subresource"] = subresource
    return raw


def test_item_shapes():
    assert A.item(controller=False) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "a",
        "uid": "uid-a",
    }
    assert A.item(controller=True) == {
        **A.item(controller=False),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def test_of_needs_uid():
    assert owner_of(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "uid": "u"}}
    ) == OwnerRef("v1", "ConfigMap", "a", "u")
    with pytest.raises(OwnershipError, match=r"^ConfigMap/ns/a: an owner needs its UID"):
        owner_of(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}
        )


def test_controller_of():
    assert controller_of(live()) is None
    assert controller_of(live(refs=[A.item(controller=False)])) is None
    assert controller_of(live(refs=[A.item(controller=False), B.item(controller=True)])) == B


def test_adoptable_when_others_only_write_status_scale_or_finalizers():
    obj = live(
        refs=[A.item(controller=False)],
        entries=[
            entry("syncagent/services", {"f:spec": {"f:ports": {}}}, operation="Apply"),
            entry("kube-controller-manager", {"f:status": {}}, subresource="status"),
            entry("hpa", {"f:spec": {"f:replicas": {}}}, subresource="scale"),
            entry("finalizer-bot", {"f:metadata": {"f:finalizers": {".": {}, 'v:"x/y"': {}}}}),
        ],
    )
    assert adoption_blockers(obj, scheme=SCHEME) == []
    assert is_adoptable(obj, scheme=SCHEME)


def test_not_adoptable_with_a_controller_or_foreign_content():
    assert not is_adoptable(live(refs=[B.item(controller=True)]), scheme=SCHEME)
    obj = live(entries=[entry("kubectl-edit", {"f:spec": {"f:replicas": {}}})])
    blockers = adoption_blockers(obj, scheme=SCHEME)
    assert len(blockers) == 1
    assert "'kubectl-edit'" in blockers[0]


def test_handoff_refused_while_a_content_manager_holds_the_old_item():
    # Owner reference items are atomic: a holder owns the whole item, no subfields.
    held = {"f:metadata": {"f:ownerReferences": {'k:{"uid":"uid-a"}': {}}}}
    obj = live(
        refs=[A.item(controller=True)],
        entries=[
            entry("syncagent/ownership", held, operation="Apply"),
            entry("syncagent/services", held, operation="Apply"),
        ],
    )
    with pytest.raises(
        OwnershipError, match=r"^Service/ns/s: .*held by field manager.*syncagent/services"
    ):
        old_controller_to_release(obj, B, subject=SUBJECT, scheme=SCHEME)
    # Only the ownership manager holds it: nothing to release first.
    obj["metadata"]["managedFields"].pop()
    assert old_controller_to_release(obj, B, subject=SUBJECT, scheme=SCHEME) is None
    # The old controller's own co-owner manager holds it: it must drop the flag first.
    obj["metadata"]["managedFields"].append(entry("syncagent/owner/uid-a", held, operation="Apply"))
    assert old_controller_to_release(obj, B, subject=SUBJECT, scheme=SCHEME) == A
    # Same controller: never anything to release.
    assert old_controller_to_release(obj, A, subject=SUBJECT, scheme=SCHEME) is None


def test_skeleton_and_with_references():
    obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "s",
            "namespace": "n",
            "labels": {"a": "b"},
            "ownerReferences": [A.item(controller=False)],
        },
        "spec": {},
    }
    assert skeleton(obj) == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "n"},
    }
    both = with_references(obj, B.item(controller=True))
    assert [r["uid"] for r in both["metadata"]["ownerReferences"]] == ["uid-a", "uid-b"]
    assert [r["uid"] for r in obj["metadata"]["ownerReferences"]] == ["uid-a"]  # not mutated
