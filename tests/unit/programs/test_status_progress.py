"""A graph status that reports only progress is held back (docs/lifecycle.md §1, "Status
writes")."""

from __future__ import annotations

from typing import Any

from syncagent.programs import status
from syncagent.programs.status import GraphResult, GraphStatusInput

NOW = "2026-01-01T00:00:00Z"
NOT_READY = status.NOT_READY


def graph_status(
    *,
    state: str = status.PENDING,
    reason: str = NOT_READY,
    message: str = "Resources not ready: g: decode (ready=0)",
    ready: int = 0,
    names: tuple[str, ...] = ("g-rev1-decode",),
    generation: int = 1,
    pathway: tuple[str, str, str] = ("False", "DisaggregatedSet", "waiting to remove a, b"),
) -> dict[str, Any]:
    components = {
        "decode": {
            "componentKind": "LeaderWorkerSet",
            "componentNames": list(names),
            "replicas": 1,
            "readyReplicas": ready,
        }
    }
    inp = GraphStatusInput(
        generation=generation,
        result=GraphResult(state, reason, message),
        routing={"pathway": "DisaggregatedSet"},
        components=components,
        pathway=pathway,
    )
    return status.graph_status(inp, previous=None, now=NOW)


def test_messages_counts_and_workload_names_are_progress():
    live = graph_status()
    assert status.progress_only(graph_status(message="Resources not ready: g: (ready=1)"), live)
    assert status.progress_only(graph_status(ready=1), live)
    assert status.progress_only(graph_status(names=("g-rev2-decode",)), live)
    later = ("False", "DisaggregatedSet", "waiting to remove a")
    assert status.progress_only(graph_status(pathway=later), live)


def test_a_change_of_what_the_status_reports_is_not_progress():
    live = graph_status()
    assert not status.progress_only(graph_status(), live)  # nothing to write at all
    assert not status.progress_only(graph_status(generation=2), live)
    ready = graph_status(state=status.SUCCESSFUL, reason=status.ALL_READY, message="All ready")
    assert not status.progress_only(ready, live)
    served = ("True", "DisaggregatedSet", "served")
    assert not status.progress_only(graph_status(pathway=served), live)
    assert not status.progress_only(graph_status(), None)


def test_only_a_pending_status_is_held():
    failed = graph_status(state=status.FAILED, reason=status.RECONCILE_FAILED, message="boom")
    other = graph_status(state=status.FAILED, reason=status.RECONCILE_FAILED, message="bang")
    assert not status.progress_only(other, failed)
    ready = graph_status(state=status.SUCCESSFUL, reason=status.ALL_READY, message="All ready")
    scaled = graph_status(state=status.SUCCESSFUL, reason=status.ALL_READY, message="All ready")
    scaled["components"]["decode"]["replicas"] = 3
    assert not status.progress_only(scaled, ready)


def test_progress_waits_for_the_interval_after_the_last_write():
    live, desired = graph_status(), graph_status(ready=1)
    hold = status.progress_hold(desired, live, written_at=100.0, now=102.0, interval=5.0)
    assert hold == 3.0
    assert status.progress_hold(desired, live, written_at=100.0, now=105.0, interval=5.0) is None
    # never written by this agent (a restart): write now
    assert status.progress_hold(desired, live, written_at=None, now=102.0, interval=5.0) is None
    ready = graph_status(state=status.SUCCESSFUL, reason=status.ALL_READY, message="All ready")
    assert status.progress_hold(ready, live, written_at=100.0, now=101.0, interval=5.0) is None
