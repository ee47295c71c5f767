import itertools
import logging

import anyio
import anyio.lowlevel
import pytest

from syncagent.runtime.backoff import Backoff
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.queue import QueueMetrics, QueueShutDown, WorkQueue
from syncagent.runtime.workers import (
    ReconcileMetrics,
    Result,
    resync_every,
    resync_shares,
    run_workers,
)
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio

NO_JITTER = Backoff(base=0.01, cap=1.0, jitter=0.0)


async def test_duplicate_adds_are_held_once():
    metrics = Metrics()
    q = WorkQueue("q", metrics=metrics)
    for key in ["a", "b", "a", "a", "c", "b"]:
        q.add(key)
    assert len(q) == 3
    assert metrics.of(QueueMetrics).queue_depth.value(queue="q") == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]
    assert metrics.of(QueueMetrics).queue_depth.value(queue="q") == 0


async def test_key_added_while_processing_is_not_handed_out_until_done():
    q = WorkQueue("q", metrics=Metrics())
    q.add("a")
    assert await q.get() == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not ready while "a" is processing
    q.add("b")
    assert await q.get() == "b"
    q.done("a")
    assert len(q) == 1
    assert await q.get() == "a"
    q.done("a")
    assert len(q) == 0


async def test_done_without_re_add_does_not_requeue():
    q = WorkQueue("q", metrics=Metrics())
    q.add("a")
    await q.get()
    q.done("a")
    assert len(q) == 0
    assert q.pending() == frozenset()


async def test_get_waits_for_an_add():
    q = WorkQueue("q", metrics=Metrics())
    got = []

    async def getter():
        got.append(await q.get())

    async with anyio.create_task_group() as tg:
        tg.start_soon(getter)
        await anyio.lowlevel.checkpoint()
        assert got == []
        q.add("x")
    assert got == ["x"]


async def test_shut_down_wakes_getters_and_drops_pending():
    q = WorkQueue("q", metrics=Metrics())
    errors = []

    async def getter():
        try:
            await q.get()
        except QueueShutDown:
            errors.append("shutdown")

    async with anyio.create_task_group() as tg:
        tg.start_soon(getter)
        tg.start_soon(getter)
        await anyio.lowlevel.checkpoint()
        q.shut_down()
    assert errors == ["shutdown", "shutdown"]
    q.add("late")
    assert len(q) == 0


async def test_add_after_delays_and_keeps_earliest_due_time():
    async with WorkQueue("q", metrics=Metrics()) as q:
        start = anyio.current_time()
        # Due times far apart, so that a loaded machine's late wake-up cannot blur which won
        # (a 0.2 s bound failed once under load 16 on 2 cores).
        q.add_after("a", 60.0)
        q.add_after("a", 0.05)  # earlier wins
        q.add_after("a", 120.0)  # later is ignored
        assert len(q) == 0
        with anyio.fail_after(30):  # well before the 60 s one
            assert await q.get() == "a"
        assert anyio.current_time() - start >= 0.05
        q.done("a")
        assert q.pending() == frozenset()


async def test_add_soon_coalesces_a_window_of_changes_into_one_hand_out():
    async with WorkQueue("q", metrics=Metrics()) as q:
        q.add("waiting")
        q.add_soon("waiting", 5.0)  # already waiting: stays as it is
        assert await q.get() == "waiting"
        q.done("waiting")
        assert q.pending() == frozenset()
        start = anyio.current_time()
        for _ in range(5):
            q.add_soon("child-changes", 0.05)
        assert len(q) == 0
        with anyio.fail_after(2):
            assert await q.get() == "child-changes"
        assert anyio.current_time() - start >= 0.05
        # Taken: a change while it runs is delayed again, never lost.
        q.add_soon("child-changes", 0.05)
        q.done("child-changes")
        with anyio.fail_after(2):
            assert await q.get() == "child-changes"
        q.done("child-changes")
        assert len(q) == 0
        assert q.pending() == frozenset()


async def test_a_fresh_change_hands_out_a_key_in_backoff_at_once():
    # The queue side of issue 23's R7 stall, ruled out: a key waiting out a long backoff is not
    # "already waiting" for a change; add() hands it out now and add_soon() within its window.
    long_backoff = Backoff(base=300.0, cap=300.0, jitter=0.0)
    async with WorkQueue("q", backoff=long_backoff, metrics=Metrics()) as q:
        for wake in (q.add, lambda key: q.add_soon(key, 0.05)):
            assert q.add_rate_limited("k") == 300.0
            assert len(q) == 0
            wake("k")
            with anyio.fail_after(2):
                assert await q.get() == "k"
            q.done("k")


async def test_add_rate_limited_backs_off_exponentially_and_forget_resets():
    metrics = Metrics()
    async with WorkQueue("q", backoff=NO_JITTER, metrics=metrics) as q:
        assert [q.add_rate_limited("k") for _ in range(3)] == [0.01, 0.02, 0.04]
        assert q.failures("k") == 3
        assert metrics.of(QueueMetrics).queue_retries.value(queue="q") == 3
        q.forget("k")
        assert q.failures("k") == 0
        assert q.add_rate_limited("k") == 0.01
        with anyio.fail_after(2):
            assert await q.get() == "k"


async def test_workers_never_process_one_key_concurrently_and_reprocess_after():
    metrics = Metrics()
    running: set[str] = set()
    overlaps = []
    calls: dict[str, int] = {}
    first_started = anyio.Event()
    release_first = anyio.Event()

    async def reconcile(key):
        if key in running:
            overlaps.append(key)
        running.add(key)
        calls[key] = calls.get(key, 0) + 1
        if calls[key] == 1:
            first_started.set()
            await release_first.wait()
        running.discard(key)

    async with WorkQueue("q", metrics=metrics) as q, anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_workers(q, reconcile, concurrency=4, metrics=metrics))
        q.add("a")
        await first_started.wait()
        q.add("a")  # re-added while processing
        q.add("a")
        await anyio.sleep(0.01)
        assert calls["a"] == 1
        release_first.set()
        await eventually_async(
            lambda: calls["a"] == 2 and "a" not in q.processing(),
            deadline=5.0,
            what="the second reconcile of a",
        )
        q.shut_down()
    assert overlaps == []
    assert calls == {"a": 2}
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result="success") == 2


async def test_concurrency_is_bounded():
    metrics = Metrics()
    active = 0
    peak = 0
    done = 0
    gate = anyio.Event()

    async def reconcile(key):
        nonlocal active, peak, done
        active += 1
        peak = max(peak, active)
        await gate.wait()
        active -= 1
        done += 1

    async with WorkQueue("q", metrics=metrics) as q, anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_workers(q, reconcile, concurrency=3, metrics=metrics))
        for i in range(10):
            q.add(str(i))
        await eventually_async(lambda: active == 3, deadline=5.0, what="three reconciles at once")
        await anyio.sleep(0.01)
        assert active == 3
        assert len(q) == 7
        gate.set()
        await eventually_async(lambda: done == 10, deadline=5.0, what="all ten reconciles")
        q.shut_down()
    assert peak == 3


async def _fail_twice_then_succeed(failure, *, concurrency):
    """Reconcile one key whose first two reconciles fail through ``failure()``; the gaps
    between the attempts and the metrics."""
    metrics = Metrics()
    attempts = []

    async def reconcile(key):
        attempts.append(anyio.current_time())
        if len(attempts) < 3:
            return failure(key)
        return None

    backoff = Backoff(base=0.05, cap=1.0, jitter=0.0)
    async with (
        WorkQueue("q", backoff=backoff, metrics=metrics) as q,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(lambda: run_workers(q, reconcile, concurrency=concurrency, metrics=metrics))
        q.add("k")
        await eventually_async(
            lambda: len(attempts) == 3 and q.failures("k") == 0,
            deadline=5.0,
            what="three attempts, the last a success",
        )
        q.shut_down()
    return [b - a for a, b in itertools.pairwise(attempts)], metrics


async def test_error_retries_with_backoff_then_success_forgets():
    def boom(key):
        raise RuntimeError("boom")

    gaps, metrics = await _fail_twice_then_succeed(boom, concurrency=2)
    assert gaps[0] >= 0.05
    assert gaps[1] >= 0.1
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result="error") == 2
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result="success") == 1
    assert metrics.of(ReconcileMetrics).reconcile_duration.count(controller="q") == 3


# ids without the level names: a collect-only listing is read for "ERROR" lines
@pytest.mark.parametrize(
    ("outcome", "other", "level"),
    [("error", "conflict", "ERROR"), ("conflict", "error", "INFO")],
    ids=["reported", "conflict"],
)
async def test_result_error_or_conflict_retries_with_backoff_and_logs_its_text(
    caplog, outcome, other, level
):
    # A reconcile that reported its error in the object's status, or met a write conflict it
    # did not report, hands it back as a result (no exception): the key backs off exactly as
    # for an exception; only the error is logged as one, the conflict at info.
    caplog.set_level(logging.INFO, logger="syncagent.runtime.workers")
    message = "DynamoGraphDeployment/ns/k: not ready"

    def handed_back(key):
        return Result(**{outcome: message})

    gaps, metrics = await _fail_twice_then_succeed(handed_back, concurrency=1)
    assert gaps[0] >= 0.05
    assert gaps[1] >= 0.1
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result=outcome) == 2
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result=other) == 0
    logged = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.INFO]
    assert logged == [(level, message)] * 2


async def test_requeue_after_schedules_the_key_again():
    metrics = Metrics()
    calls = []

    async def reconcile(key):
        calls.append(key)
        return Result(requeue_after=0.02) if len(calls) == 1 else None

    async with WorkQueue("q", metrics=metrics) as q, anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_workers(q, reconcile, concurrency=1, metrics=metrics))
        q.add("k")
        await eventually_async(lambda: len(calls) == 2, deadline=5.0, what="two calls")
        q.shut_down()
    assert metrics.of(ReconcileMetrics).reconciles.value(controller="q", result="requeue") == 1


async def test_the_debug_line_names_the_version_a_reconcile_read(caplog):
    # The chaos tier's second resync waits for the line of the graph version it wrote.
    caplog.set_level(logging.DEBUG, logger="syncagent.runtime.workers")
    results = iter([Result(observed="41"), None])

    async def reconcile(key):
        return next(results)

    async with WorkQueue("q") as q, anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_workers(q, reconcile, concurrency=1))
        q.add("a")
        await eventually_async(
            lambda: q.processing() == frozenset() and not q, deadline=5.0, what="a done"
        )
        q.add("b")
        await eventually_async(
            lambda: sum(r.getMessage() == "reconciled" for r in caplog.records) == 2,
            deadline=5.0,
            what="two reconciled lines",
        )
        q.shut_down()
    lines = [r for r in caplog.records if r.getMessage() == "reconciled"]
    assert [(r.key, getattr(r, "resourceVersion", None)) for r in lines] == [
        ("a", "41"),
        ("b", None),
    ]


async def test_shutdown_lets_in_flight_finish_and_starts_nothing_new():
    metrics = Metrics()
    started = []
    finished = []
    gate = anyio.Event()

    async def reconcile(key):
        started.append(key)
        await gate.wait()
        finished.append(key)

    async with WorkQueue("q", metrics=metrics) as q, anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_workers(q, reconcile, concurrency=1, metrics=metrics))
        q.add("a")
        q.add("b")
        await eventually_async(lambda: started == ["a"], deadline=5.0, what="a to start")
        q.shut_down()
        gate.set()
        # run_workers returned only after "a" finished
    assert finished == ["a"]
    assert started == ["a"]


async def test_resync_reenqueues_every_key():
    q = WorkQueue("q", metrics=Metrics())
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: resync_every(q, period=0.01, keys=lambda: ["x", "y"]))
        await eventually_async(lambda: len(q) == 2, deadline=5.0, what="two queued keys")
        tg.cancel_scope.cancel()
    assert q.pending() == {"x", "y"}


def test_a_resync_is_spread_over_its_period_a_share_a_step():
    keys = [f"k{i}" for i in range(10)]
    shares = resync_shares(keys, period=4.0, step=1.0)
    assert shares == [["k0", "k4", "k8"], ["k1", "k5", "k9"], ["k2", "k6"], ["k3", "k7"]]
    assert resync_shares(keys[:2], period=600.0) == [["k0"], ["k1"]]  # at most one per key
    assert resync_shares(keys, period=0.5) == [keys]  # shorter than a step: all at once
    assert resync_shares([], period=600.0) == [[]]


async def test_workers_reject_zero_concurrency():
    with pytest.raises(ValueError, match="concurrency"):
        await run_workers(WorkQueue("q", metrics=Metrics()), None, concurrency=0)


async def test_queue_survives_leaving_and_reentering_its_timer_context():
    q = WorkQueue("q", metrics=Metrics())
    async with q:
        q.add_after("later", 0.05)
    # Leadership lost and regained: the delayed key is still delivered, and plain adds work.
    assert not q.shutting_down
    async with q:
        with anyio.fail_after(2):
            assert await q.get() == "later"
        q.done("later")
        q.add("now")
        assert await q.get() == "now"
