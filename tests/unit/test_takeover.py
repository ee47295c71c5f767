"""Takeover of Update entries (pure parts: the merged managedFields and the patch)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from syncagent.ssa.managedfields import decode
from syncagent.ssa.paths import Field
from syncagent.ssa.takeover import (
    KUBECTL,
    TakeoverPolicy,
    count_fields,
    merge_fields,
    needs_takeover,
    patch_body,
    plan_takeover,
)

NOW = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)
REF = 'k:{"uid":"u-1"}'
UPSTREAM = KUBECTL.with_managers("manager")


def _entry(manager: str, fields: dict, *, operation: str = "Update", subresource: str = "") -> dict:
    out = {
        "manager": manager,
        "operation": operation,
        "apiVersion": "nvidia.com/v1beta1",
        "time": "2026-11-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        out["subresource"] = subresource
    return out


def _obj(*entries: dict) -> dict:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": "g-decode",
            "namespace": "demo",
            "resourceVersion": "42",
            "managedFields": list(entries),
        },
    }


def _plan(obj: dict, **kw) -> object:
    return plan_takeover(
        obj,
        content_manager="syncagent/components",
        ownership_manager="syncagent/ownership",
        now=lambda: NOW,
        **kw,
    )


def _owners(managed: list[dict]) -> dict[str, set[str]]:
    obj = {"metadata": {"managedFields": managed}}
    return {f"{e.manager}|{e.operation}|{e.subresource}": set(e.paths()) for e in decode(obj)}


def test_upstream_entry_is_split_into_ownership_status_and_content() -> None:
    upstream = _entry(
        "manager",
        {
            "f:metadata": {"f:labels": {"f:a": {}}, "f:ownerReferences": {".": {}, REF: {}}},
            "f:spec": {"f:replicas": {}},
        },
    )
    status = _entry("manager", {"f:status": {"f:ready": {}}}, subresource="status")
    plan = _plan(
        _obj(upstream, status), policy=UPSTREAM, status_manager="syncagent/component-status"
    )
    owners = _owners(plan.managed_fields)
    assert set(owners) == {
        "syncagent/ownership|Apply|",
        "syncagent/components|Apply|",
        "syncagent/component-status|Apply|status",
    }
    assert owners["syncagent/ownership|Apply|"] == {
        ".metadata.ownerReferences",
        ".metadata.ownerReferences[uid=u-1]",
    }
    assert owners["syncagent/components|Apply|"] == {".metadata.labels.a", ".spec.replicas"}
    assert owners["syncagent/component-status|Apply|status"] == {".status.ready"}
    assert plan.resource_version == "42"
    assert {m.source for m in plan.moves} == {"manager"}


def test_merges_into_an_existing_apply_entry_and_keeps_others() -> None:
    ours = _entry("syncagent/components", {"f:spec": {"f:image": {}}}, operation="Apply")
    hpa = _entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale")
    old = _entry("kubectl-edit", {"f:spec": {"f:extra": {}}})
    plan = _plan(_obj(ours, hpa, old))
    owners = _owners(plan.managed_fields)
    assert owners["syncagent/components|Apply|"] == {".spec.image", ".spec.extra"}
    assert owners["kube-controller-manager|Update|scale"] == {".spec.replicas"}
    assert not any(k.startswith("kubectl-edit") for k in owners)
    assert len(plan.managed_fields) == 2  # ours (merged) and the HPA entry; no new entry


def test_status_is_left_unowned_without_a_status_manager() -> None:
    status = _entry("kubectl-edit", {"f:status": {"f:x": {}}}, subresource="status")
    plan = _plan(_obj(status))
    assert plan.managed_fields == []


def test_apply_entries_and_unlisted_managers_are_not_taken() -> None:
    server_side_kubectl = _entry("kubectl", {"f:spec": {"f:a": {}}}, operation="Apply")
    controller = _entry("manager", {"f:spec": {"f:b": {}}})
    obj = _obj(server_side_kubectl, controller)
    assert _plan(obj) is None  # "manager" is not in the default (kubectl-only) policy
    assert not needs_takeover(obj)
    assert needs_takeover(obj, policy=UPSTREAM)


def test_scale_updates_are_never_taken() -> None:
    policy = TakeoverPolicy(frozenset({"kube-controller-manager"}))
    scale = _entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale")
    assert not policy.is_old(scale)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ({"f:x": {}}, {"f:y": {}}, {"f:x": {}, "f:y": {}}),
        ({"f:x": {}}, {"f:x": {"f:y": {}}}, {"f:x": {".": {}, "f:y": {}}}),
        ({"f:x": {"f:y": {}}}, {"f:x": {"f:z": {}}}, {"f:x": {"f:y": {}, "f:z": {}}}),
        (
            {"f:x": {".": {}, "f:y": {}}},
            {"f:x": {".": {}, "f:y": {}}},
            {"f:x": {".": {}, "f:y": {}}},
        ),
    ],
)
def test_merge_fields_is_a_union(a: dict, b: dict, want: dict) -> None:
    assert merge_fields(a, b) == want


def test_count_fields() -> None:
    assert count_fields({"f:a": {}, "f:b": {".": {}, "f:c": {}}}) == 3


def test_patch_replaces_managed_fields_guarded_by_resource_version() -> None:
    plan = _plan(_obj(_entry("kubectl-create", {"f:spec": {"f:a": {}}})))
    body = patch_body(plan)
    assert body == [
        {"op": "replace", "path": "/metadata/managedFields", "value": plan.managed_fields},
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "42"},
    ]
    new = plan.managed_fields[0]
    assert new["time"] == "2026-11-29T16:00:00Z"
    assert decode({"metadata": {"managedFields": [new]}})[0].owns((Field("spec"), Field("a")))
