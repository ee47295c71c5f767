"""DisaggregatedSet readiness (disaggregatedset.md §4.2 acceptance examples)."""

from __future__ import annotations

from syncagent.programs.disaggregatedset.ds_readiness import (
    READY_MESSAGE,
    SelectedRole,
    children_of,
    component_status,
    ds_readiness,
    targets,
)
from tests.unit.support.disaggregatedset import child, ds_object

ROLES = [SelectedRole("decode", "decode"), SelectedRole("prefill", "prefill")]
F = "ffffffffffffffff"
OLD = "0000000000000000"


def _ready(ds, children, desired: int = 1):
    roles = [SelectedRole(r.component, r.role, desired) for r in ROLES]
    return ds_readiness(ds, children_of(children, "ds-uid"), roles=roles, f_hash=F)


def _new_children(**decode):
    return [
        child("ds-0-b47ae5a3-decode", role="decode", revision="b47ae5a3", f_hash=F, **decode),
        child("ds-0-b47ae5a3-prefill", role="prefill", revision="b47ae5a3", f_hash=F),
    ]


def _old_children():
    return [
        child("ds-0-aaaa1111-decode", role="decode", revision="aaaa1111", f_hash=OLD),
        child("ds-0-aaaa1111-prefill", role="prefill", revision="aaaa1111", f_hash=OLD),
    ]


def test_1_ready_from_children_with_empty_status() -> None:
    out = _ready(ds_object(), _new_children())
    assert out.ready
    assert out.reason == READY_MESSAGE
    assert out.revisions == {"decode": "b47ae5a3", "prefill": "b47ae5a3"}


def test_2_one_child_not_ready() -> None:
    out = _ready(ds_object(), _new_children(status=(1, 1, 0)))
    assert not out.ready
    assert out.reason == (
        'decode role "decode" slice 0 replicas not ready (desired=1 replicas=1 updated=1 ready=0)'
    )


def test_3_only_old_children() -> None:
    out = _ready(ds_object(), _old_children())
    assert out.reason == (
        'decode role "decode" slice 0 has 0 target LeaderWorkerSets, expected 1; '
        'prefill role "prefill" slice 0 has 0 target LeaderWorkerSets, expected 1; '
        'stale role "decode" child LeaderWorkerSet "ds-0-aaaa1111-decode" has not scaled to zero; '
        'stale role "prefill" child LeaderWorkerSet "ds-0-aaaa1111-prefill" has not scaled to zero'
    )
    assert out.revisions == {"decode": None, "prefill": None}


def test_4_new_ready_old_not_drained() -> None:
    out = _ready(ds_object(), _new_children() + _old_children())
    assert not out.ready
    assert out.reason == (
        'stale role "decode" child LeaderWorkerSet "ds-0-aaaa1111-decode" has not scaled to zero; '
        'stale role "prefill" child LeaderWorkerSet "ds-0-aaaa1111-prefill" has not scaled to zero'
    )


def test_4b_drained_old_children_do_not_block() -> None:
    drained = [
        child(
            c["metadata"]["name"],
            role=c["metadata"]["labels"]["disaggregatedset.x-k8s.io/role"],
            revision="aaaa1111",
            f_hash=OLD,
            replicas=0,
            status=(0, 0, 0),
        )
        for c in _old_children()
    ]
    assert _ready(ds_object(), _new_children() + drained).ready


def test_5_removed_role_child_still_running() -> None:
    extra = child("ds-0-aaaa1111-decode2", role="decode2", revision="aaaa1111", f_hash=OLD)
    out = _ready(ds_object(), [*_new_children(), extra])
    assert not out.ready
    assert 'stale role "decode2"' in out.reason


def test_6_status_behind_generation() -> None:
    status = {
        "roleStatuses": [{"name": "decode", "replicas": 1}],
        "conditions": [{"type": "Available", "status": "True", "observedGeneration": 3}],
    }
    out = _ready(ds_object(generation=4, status=status), _new_children())
    assert not out.ready
    assert (
        out.reason == "DisaggregatedSet status has not observed generation 4 (observedGeneration=3)"
    )


def test_6b_status_with_evidence_is_authoritative() -> None:
    status = {
        "roleStatuses": [
            {"name": "decode", "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1},
        ],
        "conditions": [{"type": "Available", "status": "True", "observedGeneration": 4}],
    }
    out = _ready(ds_object(generation=4, status=status), _new_children())
    assert out.reason == 'prefill role "prefill" has no status yet'


def test_7_status_without_evidence_is_ignored() -> None:
    status = {"roleStatuses": [{"name": "decode", "replicas": 5}]}
    assert _ready(ds_object(status=status), _new_children()).ready


def test_8_unowned_child_is_ignored() -> None:
    stray = child(
        "ds-0-zzzz-decode",
        role="decode",
        revision="zzzz",
        f_hash=F,
        owned=False,
        created="2026-01-01T11:00:00Z",
        status=(0, 0, 0),
    )
    assert _ready(ds_object(), [*_new_children(), stray]).ready


def test_9_newest_revision_wins() -> None:
    r1 = child(
        "ds-0-r1-decode", role="decode", revision="r1", f_hash=F, created="2026-01-01T10:00:00Z"
    )
    r2 = child(
        "ds-0-r2-decode", role="decode", revision="r2", f_hash=F, created="2026-01-01T10:00:05Z"
    )
    assert [c["metadata"]["name"] for c in targets([r1, r2], "decode", 0, F)] == ["ds-0-r2-decode"]
    tie_a = child("ds-0-a-decode", role="decode", revision="a", f_hash=F)
    tie_b = child("ds-0-b-decode", role="decode", revision="b", f_hash=F)
    assert [c["metadata"]["name"] for c in targets([tie_b, tie_a], "decode", 0, F)] == [
        "ds-0-b-decode"
    ]
    out = _ready(ds_object(), [r1, r2, _new_children()[1]])
    assert 'stale role "decode" child LeaderWorkerSet "ds-0-r1-decode"' in out.reason


def test_target_behind_generation() -> None:
    out = _ready(ds_object(), _new_children(generation=2, observed=1))
    assert (
        out.reason == 'child LeaderWorkerSet "ds-0-b47ae5a3-decode" has not observed generation 2'
    )


def test_surge_keeps_not_ready() -> None:
    out = _ready(ds_object(), _new_children(status=(2, 1, 1)))
    assert not out.ready


def test_desired_zero_accepts_no_targets() -> None:
    assert _ready(ds_object(), [], desired=0).ready


def test_slices_are_checked_each() -> None:
    ds = ds_object()
    ds["spec"]["slices"] = 2
    kids = [
        child(f"ds-{s}-rev-{r}", role=r, revision="rev", f_hash=F, slice_index=s)
        for s in (0, 1)
        for r in ("decode", "prefill")
    ]
    assert _ready(ds, kids).ready
    out = _ready(ds, kids[:3])
    assert out.reason == 'prefill role "prefill" slice 1 has 0 target LeaderWorkerSets, expected 1'


def test_component_status_sums() -> None:
    kids = children_of(_new_children() + _old_children(), "ds-uid")
    out = component_status(ROLES[0], kids, f_hash=F, runtime_namespace="ns-ds", slices=1)
    assert out == {
        "componentKind": "LeaderWorkerSet",
        "componentNames": ["ds-0-aaaa1111-decode", "ds-0-b47ae5a3-decode"],
        "runtimeNamespace": "ns-ds",
        "replicas": 2,
        "readyReplicas": 2,
        "updatedReplicas": 1,
    }
