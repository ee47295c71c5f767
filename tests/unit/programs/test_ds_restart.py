"""Restart coalescing (disaggregatedset.md §6.2), gating (§6.1) and watch mapping (§6.3)."""

from __future__ import annotations

from syncagent.api import Restart
from syncagent.cli.pathways import PROGRAMS
from syncagent.programs import skeleton
from syncagent.programs.capabilities import Capabilities
from syncagent.programs.checkpoint_gate import Checkpoints, uses_of
from syncagent.programs.disaggregatedset.plan import prepare
from syncagent.programs.disaggregatedset.render import TEMPLATE_HASH
from syncagent.programs.disaggregatedset.restart_coalescing import (
    plan_ds_restart,
    restart_values_from_ds,
)
from syncagent.programs.disaggregatedset.watches import ds_child_key
from syncagent.programs.graph import graph_context
from syncagent.programs.view import DictStore
from syncagent.programs.writes import Writer
from syncagent.ssa.takeover import TakeoverPolicy
from tests.support.graphs import served_graph as graph
from tests.support.graphs import typed_components, worker
from tests.unit.support.disaggregatedset import child, ds_object

SEQ = {"type": "Sequential", "order": ["prefill", "decode"]}

# lws and disaggregatedSet on, Grove off (the DS pathway)
CAPS = Capabilities({"grove": False, "lws": True, "disaggregatedSet": True})


def test_3_new_sequential_restart_annotates_every_selected_role() -> None:
    plan = plan_ds_restart(
        Restart.model_validate({"id": "r1", "strategy": SEQ}),
        None,
        ["prefill", "decode"],
        selected=["prefill", "decode"],
        done=lambda c: False,
    )
    assert plan.status == {"observedID": "r1", "phase": "Restarting", "inProgress": ["prefill"]}
    assert plan.annotate == {"prefill", "decode"}


def test_4_completes_without_a_separate_decode_step() -> None:
    current = {"observedID": "r1", "phase": "Restarting", "inProgress": ["prefill"]}
    plan = plan_ds_restart(
        Restart.model_validate({"id": "r1", "strategy": SEQ}),
        current,
        ["prefill", "decode"],
        selected=["prefill", "decode"],
        done=lambda c: True,
    )
    assert plan.status == {"observedID": "r1", "phase": "Completed", "inProgress": []}
    assert plan.annotate == {"prefill", "decode"}


def test_not_done_keeps_restarting() -> None:
    current = {"observedID": "r1", "phase": "Restarting", "inProgress": ["prefill"]}
    plan = plan_ds_restart(
        Restart.model_validate({"id": "r1", "strategy": SEQ}),
        current,
        ["prefill", "decode"],
        selected=["prefill", "decode"],
        done=lambda c: False,
    )
    assert plan.status["inProgress"] == ["prefill"]


def test_5_frontend_step_leaves_roles_alone() -> None:
    order = {"type": "Sequential", "order": ["Frontend", "prefill", "decode"]}
    plan = plan_ds_restart(
        Restart.model_validate({"id": "r2", "strategy": order}),
        {"observedID": "r1", "phase": "Completed", "inProgress": []},
        ["Frontend", "prefill", "decode"],
        selected=["prefill", "decode"],
        done=lambda c: False,
    )
    assert plan.status == {"observedID": "r2", "phase": "Restarting", "inProgress": ["Frontend"]}
    assert plan.annotate == {"Frontend"}
    # after the frontend: the DS step, then Completed once the DS is done
    step2 = plan_ds_restart(
        Restart.model_validate({"id": "r2", "strategy": order}),
        plan.status,
        ["Frontend", "prefill", "decode"],
        selected=["prefill", "decode"],
        done=lambda c: c == "Frontend",
    )
    assert step2.status["inProgress"] == ["prefill"]
    assert step2.annotate == {"Frontend", "prefill", "decode"}


def test_restart_values_read_from_the_ds() -> None:
    ds = {
        "spec": {
            "roles": [
                {
                    "name": "decode",
                    "spec": {
                        "leaderWorkerTemplate": {
                            "leaderTemplate": {
                                "metadata": {"annotations": {"nvidia.com/restartAt": "r1"}}
                            },
                            "workerTemplate": {},
                        }
                    },
                },
                {
                    "name": "prefill",
                    "spec": {
                        "leaderWorkerTemplate": {
                            "workerTemplate": {
                                "metadata": {"annotations": {"nvidia.com/restartAt": "r0"}}
                            }
                        }
                    },
                },
            ]
        }
    }
    assert restart_values_from_ds(ds, {"decode": "decode", "prefill": "prefill"}) == {
        "decode": "r1",
        "prefill": "r0",
    }


def test_gating_across_selected_roles() -> None:
    gated = worker(
        "decode",
        "decode",
        experimental={
            "checkpoint": {
                "enabled": True,
                "checkpointRef": "ck1",
                "startupPolicy": "WaitForCheckpoint",
            }
        },
    )
    comps = typed_components([gated, worker("prefill", "prefill")])
    waiting = Checkpoints({"ck1": False}, uses_of(comps))
    assert waiting.gated(["decode", "prefill"])
    assert waiting.waiting() == [("decode", "ck1")]
    assert not waiting.gated(["prefill"])
    ready = Checkpoints({"ck1": True}, uses_of(comps))
    assert not ready.gated(["decode", "prefill"])
    assert ready.status() == {"decode": {"checkpointName": "ck1", "ready": True}}


def test_6_child_without_labels_maps_to_the_graph() -> None:
    ds = {
        "metadata": {
            "name": "ds",
            "namespace": "ns",
            "uid": "ds-uid",
            "ownerReferences": [
                {
                    "apiVersion": "nvidia.com/v1beta1",
                    "kind": "DynamoGraphDeployment",
                    "name": "g",
                    "uid": "g-uid",
                    "controller": True,
                }
            ],
        }
    }
    store = DictStore({"DisaggregatedSet": [ds]})
    child = {
        "metadata": {
            "name": "ds-2-abcd1234-decode",
            "namespace": "ns",
            "ownerReferences": [
                {
                    "apiVersion": "disaggregatedset.x-k8s.io/v1",
                    "kind": "DisaggregatedSet",
                    "name": "ds",
                    "uid": "ds-uid",
                    "controller": True,
                }
            ],
        },
        "status": {"readyReplicas": 1},
    }
    assert ds_child_key(store)(child) == ["ns/g"]
    wrong_uid = {
        **child,
        "metadata": {
            **child["metadata"],
            "ownerReferences": [{**child["metadata"]["ownerReferences"][0], "uid": "other"}],
        },
    }
    assert ds_child_key(store)(wrong_uid) == []


def _restarting_graph_and_store(*, ds_restart_at: str | None) -> tuple:
    """A DS graph in the middle of restart r1 (prefill in progress); the DS view's children
    are ready at the live template hash; ``ds_restart_at`` is the roles' live restartAt."""

    g = graph(
        "ds",
        components=[worker("decode", "decode"), worker("prefill", "prefill")],
        annotations={"nvidia.com/enable-disaggregatedset": "true"},
        restart=Restart.model_validate({"id": "r1", "strategy": SEQ}),
    )
    g["status"] = {
        "restart": {"observedID": "r1", "phase": "Restarting", "inProgress": ["prefill"]},
        "routing": {"pathway": "DisaggregatedSet"},
    }
    ds = ds_object()
    ds["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "name": "ds",
            "uid": g["metadata"]["uid"],
            "controller": True,
        }
    ]
    annotations = {"nvidia.com/restartAt": ds_restart_at} if ds_restart_at else {}
    ds["spec"]["roles"] = [
        {
            "name": role,
            "metadata": {"annotations": {TEMPLATE_HASH: "f1"}},
            "spec": {
                "replicas": 1,
                "leaderWorkerTemplate": {
                    "leaderTemplate": {"metadata": {"annotations": annotations}}
                },
            },
        }
        for role in ("decode", "prefill")
    ]
    children = [
        child(f"ds-aaaa-{role}", role=role, revision="aaaa", f_hash="f1")
        for role in ("decode", "prefill")
    ]
    store = DictStore({"DisaggregatedSet": [ds], "LeaderWorkerSet": children})
    return g, store, CAPS


def _prepared_restart(g: dict, store: DictStore, caps) -> dict:

    writer = Writer(applier=None, takeover=TakeoverPolicy())  # type: ignore[arg-type]  # preparing reads only
    ctx = graph_context(
        g, caps, store=store, writer=writer, discovery_backend="kubernetes", programs=PROGRAMS
    )
    turn = skeleton.start(ctx)
    return prepare(ctx, turn.checkpoints, turn.env).restart


def test_a_ds_view_without_this_restart_does_not_complete_it() -> None:
    """Issue 14 item 4: the cache still shows the DS before this restart's write (its ready
    children are the pre-restart pods): the restart has not rolled."""
    g, store, caps = _restarting_graph_and_store(ds_restart_at=None)
    assert _prepared_restart(g, store, caps) == {
        "observedID": "r1",
        "phase": "Restarting",
        "inProgress": ["prefill"],
    }
    g, store, caps = _restarting_graph_and_store(ds_restart_at="r1")
    assert _prepared_restart(g, store, caps)["phase"] == "Completed"
