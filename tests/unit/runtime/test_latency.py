"""Graph change -> status write latency (runtime/latency.py), on a hand-driven clock."""

from __future__ import annotations

from syncagent.runtime.cache import Change, ChangeType
from syncagent.runtime.latency import ChangeLatency, LatencyMetrics, last_write
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.stages import StageMetrics
from tests.support.clock import HandClock


def graph(generation: int) -> dict:
    return {"metadata": {"name": "g", "namespace": "ns", "generation": generation}}


def change(kind: ChangeType, generation: int) -> Change:
    return Change(kind, "ns", "g", None, graph(generation))


def test_the_clock_runs_from_a_new_generation_to_its_first_status_write():
    metrics, clock = Metrics(), HandClock()
    latency = ChangeLatency(metrics.of(LatencyMetrics).graph_status_latency, clock=clock)
    latency.handle(change(ChangeType.ADDED, 1))
    clock.now = 100.5
    latency.handle(change(ChangeType.MODIFIED, 1))  # our own status write: not a change
    clock.now = 101.5
    latency.written("ns/g", 1)
    latency.written("ns/g", 1)  # a later write of the same generation answers nothing new
    assert metrics.of(LatencyMetrics).graph_status_latency.count() == 1
    assert "syncagent_graph_change_to_status_seconds_sum 1.5" in metrics.render()


def test_a_write_for_an_older_generation_does_not_stop_the_clock():
    metrics, clock = Metrics(), HandClock()
    latency = ChangeLatency(metrics.of(LatencyMetrics).graph_status_latency, clock=clock)
    latency.handle(change(ChangeType.MODIFIED, 3))
    latency.written("ns/g", 2)
    assert metrics.of(LatencyMetrics).graph_status_latency.count() == 0
    latency.written("ns/g", 3)
    assert metrics.of(LatencyMetrics).graph_status_latency.count() == 1


def test_a_deleted_graph_is_forgotten():
    metrics = Metrics()
    latency = ChangeLatency(metrics.of(LatencyMetrics).graph_status_latency, clock=HandClock())
    latency.handle(change(ChangeType.ADDED, 1))
    latency.handle(Change(ChangeType.DELETED, "ns", "g", graph(1), None))
    latency.written("ns/g", 1)
    assert metrics.of(LatencyMetrics).graph_status_latency.count() == 0


def test_a_restart_does_not_time_a_converged_graph_from_its_first_listing():
    # A restarted agent lists every graph at a generation it has not seen; a converged one has
    # observed it already, writes no status, and its next change is timed from that change.
    metrics, clock = Metrics(), HandClock()
    latency = ChangeLatency(metrics.of(LatencyMetrics).graph_status_latency, clock=clock)
    converged = {**graph(3), "status": {"observedGeneration": 3}}
    latency.handle(Change(ChangeType.ADDED, "ns", "g", None, converged))
    clock.now = 140.0
    latency.handle(change(ChangeType.MODIFIED, 4))
    clock.now = 141.0
    latency.written("ns/g", 4)
    assert "syncagent_graph_change_to_status_seconds_sum 1.0\n" in metrics.render()


def written_at(generation: int, *stamps: str) -> dict:
    fields = [{"manager": f"m{i}", "time": t} for i, t in enumerate(stamps)]
    return {"metadata": {**graph(generation)["metadata"], "managedFields": fields}}


def test_the_last_write_is_the_newest_managed_fields_time():
    assert last_write(written_at(1, "2026-12-04T17:00:00Z", "2026-12-04T17:00:07Z")) == (
        1796403607.0
    )
    assert last_write(written_at(1, "not a time")) is None
    assert last_write(graph(1)) is None


def test_the_watch_delay_is_timed_for_changes_not_for_the_first_listing():
    metrics = Metrics()
    delay = metrics.of(StageMetrics).watch_delay
    wall = HandClock()
    wall.now = 1796403608.5  # 1.5 s after the write below
    latency = ChangeLatency(
        metrics.of(LatencyMetrics).graph_status_latency, delay=delay, wall=wall, clock=HandClock()
    )
    listed = written_at(1, "2026-12-04T17:00:00Z")
    latency.handle(Change(ChangeType.ADDED, "ns", "g", None, listed))
    assert delay.count() == 0  # written long before the agent started: no watch delay
    changed = written_at(2, "2026-12-04T17:00:07Z")
    latency.handle(Change(ChangeType.MODIFIED, "ns", "g", listed, changed))
    latency.handle(Change(ChangeType.MODIFIED, "ns", "g", changed, changed))  # same generation
    assert delay.count() == 1
    assert "syncagent_graph_watch_delay_seconds_sum 1.5\n" in metrics.render()
