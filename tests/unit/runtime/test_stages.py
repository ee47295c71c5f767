"""Where a change's time goes (runtime/stages.py and the work queue's histograms)."""

from __future__ import annotations

import pytest

from syncagent.runtime import stages
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.queue import WorkQueue
from syncagent.runtime.stages import StageMetrics
from tests.support.clock import HandClock

pytestmark = pytest.mark.anyio


def test_render_is_the_reconcile_without_a_request_in_flight():
    metrics, clock = Metrics(), HandClock(10.0)
    histogram = metrics.of(StageMetrics).reconcile
    reconcile = stages.ReconcileClock("dgd", histogram, clock=clock)
    clock.now = 10.5
    first = reconcile.request_started()
    clock.now = 11.0
    second = reconcile.request_started()  # overlapping: the busy time is counted once
    clock.now = 11.5
    reconcile.request_done(first, "write")
    clock.now = 12.0
    reconcile.request_done(second, "status_write")
    clock.now = 12.25
    reconcile.finish()
    text = metrics.render()
    assert 'syncagent_reconcile_stage_seconds_sum{controller="dgd",stage="write"} 1.0\n' in text
    assert (
        'syncagent_reconcile_stage_seconds_sum{controller="dgd",stage="status_write"} 1.0\n' in text
    )
    # 2.25 s in all, 1.5 s of it with a request in flight
    assert 'syncagent_reconcile_stage_seconds_sum{controller="dgd",stage="render"} 0.75\n' in text


@pytest.mark.parametrize(
    ("method", "path", "stage"),
    [
        ("GET", "/apis/nvidia.com/v1beta1/namespaces/n/dynamographdeployments/g", "read"),
        ("PATCH", "/apis/nvidia.com/v1beta1/namespaces/n/dynamographdeployments/g/status", "status_write"),
        ("PATCH", "/api/v1/nodes/n/status", "status_write"),
        ("PATCH", "/apis/apps/v1/namespaces/n/deployments/status", "write"),  # one named status
        ("POST", "/api/v1/namespaces/n/services", "write"),
        ("DELETE", "/api/v1/namespaces/n/services/s", "write"),
    ],
)  # fmt: skip
def test_a_request_is_a_read_a_write_or_a_status_write(method, path, stage):
    assert stages.request_stage(method, path) == stage


async def test_the_queue_times_the_wait_and_the_coalescing_window():
    metrics = Metrics()
    q = WorkQueue("q", metrics=metrics)
    q.add_soon("a", 60.0)  # a child changed: "a" waits for its window...
    q.add("a")  # ...until a change of its own queues it at once
    q.add_soon("a", 60.0)  # waiting already: no window
    assert await q.get() == "a"
    assert metrics.of(StageMetrics).coalesce.count(queue="q") == 1
    assert metrics.of(StageMetrics).queue_wait.count(queue="q") == 1
