"""Takeover of Update entries (pure parts): what the Dynamo policy takes, the merged
managedFields, the patch, and the fieldsV1 set operations underneath."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fieldmanagers import identity
from syncagent.cli.pathways import PROGRAMS
from syncagent.programs.upstream_takeover import content_fields
from syncagent.ssa.fieldsets import FieldSelector, count, merge, subtract
from syncagent.ssa.managedfields import decode
from syncagent.ssa.paths import Field
from syncagent.ssa.takeover import (
    TakeoverPolicy,
    TakeoverRule,
    needs_takeover,
    patch_body,
    plan_takeover,
)

POLICY = PROGRAMS.takeover_policy  # the agent's, derived from its pathways

NOW = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)
GRAPH_UID, KEEPER_UID = "u-graph", "u-keeper"
GRAPH_REF = f'k:{{"uid":"{GRAPH_UID}"}}'
KEEPER_REF = f'k:{{"uid":"{KEEPER_UID}"}}'
# Every manager name the real kubectl v1.36 writes with (kubectl scale writes as "kubectl").
KUBECTL_MANAGERS = (
    "kubectl",
    "kubectl-label",
    "kubectl-annotate",
    "kubectl-patch",
    "kubectl-client-side-apply",
    "kubectl-edit",
    "kubectl-create",
    "kubectl-replace",
    "kubectl-set",
    "kubectl-rollout",
    "kubectl-scale",
)


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


def _obj(*entries: dict, kind: str = "DynamoComponentDeployment") -> dict:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1"
        if kind == "LeaderWorkerSet"
        else "nvidia.com/v1beta1",
        "kind": kind,
        "metadata": {
            "name": "g-decode",
            "namespace": "demo",
            "resourceVersion": "42",
            "labels": {"nvidia.com/a": "1", "team": "search"},
            "finalizers": ["nvidia.com/finalizer", "example.com/backup"],
            "ownerReferences": [
                {
                    "apiVersion": "nvidia.com/v1beta1",
                    "kind": "DynamoGraphDeployment",
                    "name": "g",
                    "uid": GRAPH_UID,
                    "controller": True,
                },
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "keeper", "uid": KEEPER_UID},
            ],
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


UPSTREAM_FIELDS = {
    "f:metadata": {
        "f:labels": {".": {}, "f:nvidia.com/a": {}, "f:team": {}},
        "f:finalizers": {".": {}, 'v:"nvidia.com/finalizer"': {}, 'v:"example.com/backup"': {}},
        "f:ownerReferences": {".": {}, GRAPH_REF: {}, KEEPER_REF: {}},
    },
    "f:spec": {"f:replicas": {}},
}


def test_upstream_operator_fields_are_split_and_the_rest_stays_with_it() -> None:
    upstream = _entry("manager", UPSTREAM_FIELDS)
    status = _entry("manager", {"f:status": {"f:ready": {}}}, subresource="status")
    plan = _plan(_obj(upstream, status), policy=POLICY, status_manager="syncagent/component-status")
    owners = _owners(plan.managed_fields)
    assert owners["syncagent/ownership|Apply|"] == {f".metadata.ownerReferences[uid={GRAPH_UID}]"}
    assert owners["syncagent/components|Apply|"] == {
        ".metadata.labels.nvidia.com/a",
        ".metadata.finalizers[=nvidia.com/finalizer]",
        ".spec.replicas",
    }
    assert owners["syncagent/component-status|Apply|status"] == {".status.ready"}
    # Another prefix's label and finalizer, and a reference to another kind, stay its own.
    assert owners["manager|Update|"] == {
        ".metadata.labels",
        ".metadata.labels.team",
        ".metadata.finalizers",
        ".metadata.finalizers[=example.com/backup]",
        ".metadata.ownerReferences",
        f".metadata.ownerReferences[uid={KEEPER_UID}]",
    }
    assert "manager|Update|status" not in owners
    assert plan.resource_version == "42"
    assert plan.taken_from("manager") == {
        f".metadata.ownerReferences[uid={GRAPH_UID}]",
        ".metadata.labels.nvidia.com/a",
        ".metadata.finalizers[=nvidia.com/finalizer]",
        ".spec.replicas",
        ".status.ready",
    }


@pytest.mark.parametrize("manager", KUBECTL_MANAGERS)
def test_nothing_any_kubectl_writes_is_taken(manager: str) -> None:
    subresource = "scale" if manager == "kubectl" else ""
    obj = _obj(_entry(manager, UPSTREAM_FIELDS, subresource=subresource))
    assert _plan(obj, policy=POLICY) is None
    assert not needs_takeover(obj, policy=POLICY)


def test_third_party_status_is_never_taken_but_the_spec_we_render_is() -> None:
    lws_status = _entry("manager", {"f:status": {"f:replicas": {}}}, subresource="status")
    lws_main = _entry("manager", {"f:spec": {"f:replicas": {}}, "f:status": {"f:replicas": {}}})
    obj = _obj(lws_status, lws_main, kind="LeaderWorkerSet")
    plan = _plan(obj, policy=POLICY, status_manager="syncagent/component-status")
    owners = _owners(plan.managed_fields)
    assert owners["manager|Update|status"] == {".status.replicas"}
    assert owners["manager|Update|"] == {".status.replicas"}
    assert owners["syncagent/components|Apply|"] == {".spec.replicas"}
    assert not needs_takeover(_obj(lws_status, kind="LeaderWorkerSet"), policy=POLICY)


def test_apply_entries_and_other_controllers_are_not_taken() -> None:
    server_side = _entry("manager", {"f:spec": {"f:a": {}}}, operation="Apply")
    hpa = _entry("kube-controller-manager", {"f:spec": {"f:b": {}}}, subresource="scale")
    other = _entry("argocd-controller", {"f:spec": {"f:c": {}}})
    assert _plan(_obj(server_side, hpa, other), policy=POLICY) is None


def test_merges_into_an_existing_apply_entry_and_keeps_others() -> None:
    ours = _entry("syncagent/components", {"f:spec": {"f:image": {}}}, operation="Apply")
    hpa = _entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale")
    old = _entry("dynamo-operator", {"f:spec": {"f:extra": {}}})
    plan = _plan(_obj(ours, hpa, old), policy=POLICY)
    owners = _owners(plan.managed_fields)
    assert owners["syncagent/components|Apply|"] == {".spec.image", ".spec.extra"}
    assert owners["kube-controller-manager|Update|scale"] == {".spec.replicas"}
    assert len(plan.managed_fields) == 2  # ours (merged) and the HPA entry; no new entry


def test_status_is_left_unowned_without_a_status_manager() -> None:
    policy = TakeoverPolicy(
        (TakeoverRule(frozenset({"old"}), (FieldSelector(("status",)),), subresource="status"),)
    )
    status = _entry("old", {"f:status": {"f:x": {}}}, subresource="status")
    plan = _plan(_obj(status), policy=policy)
    assert plan.managed_fields == []


def test_identity_content_fields_come_from_the_declaration() -> None:
    assert set(content_fields(identity.MANAGER)) == {
        "rules",
        "roleRef",
        "subjects",
        "imagePullSecrets",
    }


def test_selector_by_prefix_by_item_and_whole_subtree() -> None:
    live = _obj()
    fields = UPSTREAM_FIELDS
    labels = FieldSelector(("metadata", "labels"), prefix="nvidia.com/")
    assert labels.select(fields, live=live) == {"f:metadata": {"f:labels": {"f:nvidia.com/a": {}}}}
    refs = FieldSelector(
        ("metadata", "ownerReferences"), item=(("kind", frozenset({"ConfigMap"})),)
    )
    assert refs.select(fields, live=live) == {"f:metadata": {"f:ownerReferences": {KEEPER_REF: {}}}}
    assert FieldSelector(("spec",)).select(fields, live=live) == {"f:spec": {"f:replicas": {}}}
    assert FieldSelector(("status",)).select(fields, live=live) == {}


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
def test_merge_is_a_union(a: dict, b: dict, want: dict) -> None:
    assert merge(a, b) == want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ({"f:x": {}, "f:y": {}}, {"f:y": {}}, {"f:x": {}}),
        (
            {"f:m": {".": {}, "f:a": {}, "f:b": {}}},
            {"f:m": {"f:a": {}}},
            {"f:m": {".": {}, "f:b": {}}},
        ),
        # a node emptied by the removal goes: an empty object would read as an owned leaf
        ({"f:m": {"f:a": {}}, "f:z": {}}, {"f:m": {"f:a": {}}}, {"f:z": {}}),
        ({"f:s": {"f:a": {"f:b": {}}}}, {"f:s": {"f:a": {"f:b": {}}}}, {}),
        # only the node itself left: nothing worth keeping an entry for
        ({"f:m": {".": {}, "f:a": {}}, "f:z": {}}, {"f:m": {"f:a": {}}}, {"f:z": {}}),
    ],
)
def test_subtract_removes_exactly_the_taken_fields(a: dict, b: dict, want: dict) -> None:
    assert subtract(a, b) == want


def test_count() -> None:
    assert count({"f:a": {}, "f:b": {".": {}, "f:c": {}}}) == 3


def test_patch_replaces_managed_fields_guarded_by_resource_version() -> None:
    plan = _plan(_obj(_entry("manager", {"f:spec": {"f:a": {}}})), policy=POLICY)
    body = patch_body(plan)
    assert body == [
        {"op": "replace", "path": "/metadata/managedFields", "value": plan.managed_fields},
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "42"},
    ]
    new = plan.managed_fields[0]
    assert new["time"] == "2026-11-29T16:00:00Z"
    assert decode({"metadata": {"managedFields": [new]}})[0].owns((Field("spec"), Field("a")))
