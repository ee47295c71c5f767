"""Workers: take keys from a :class:`WorkQueue` and reconcile them with bounded concurrency.

A key is never reconciled by two workers at once (the queue guarantees it). An error retries
the key with backoff; success forgets its failures; ``Result.requeue_after`` schedules it
again. A write the fence refused (:class:`~syncagent.runtime.fencing.NotLeader`: leading
ended) is no error: the key is queued again as it is, without backoff, for whoever leads next
(leading ended, so these workers are being cancelled). :func:`resync_every` re-enqueues every known key periodically.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import anyio

from syncagent.runtime import stages
from syncagent.runtime.fencing import not_leader
from syncagent.runtime.metrics import Metrics, Registry, default_metrics
from syncagent.runtime.queue import QueueShutDown, WorkQueue
from syncagent.runtime.stages import StageMetrics

# Reconciles in flight per controller. They wait on the API server, not on the CPU: one request
# stalled until its timeout then holds 1/N of the controller: with 4, the R2 chaos run (10%
# faults, 5 s stalls) spent 1.65-2.01x its clean time, with 8 mostly 1.4-1.6x (docs/retries.md).
DEFAULT_CONCURRENCY = 8

log = logging.getLogger(__name__)


class ReconcileMetrics:
    """Reconciles: how many, how each ended, how long they took."""

    def __init__(self, r: Registry) -> None:
        self.reconciles = r.counter(
            "syncagent_reconcile_total",
            "Reconciles by controller and result (success, error, conflict, requeue, not_leader).",
            ("controller", "result"),
        )
        self.reconcile_duration = r.histogram(
            "syncagent_reconcile_duration_seconds",
            "Duration of reconciles by controller.",
            ("controller",),
        )


@dataclass(frozen=True)
class Result:
    """What a reconcile asks of the queue: ``requeue_after`` seconds, or nothing.

    ``error``: the reconcile ended in an error it already reported (its status persisted):
    retry the key with backoff, as for an exception, and log this text (it starts with the
    object's ``Kind/namespace/name``). ``conflict``: it met an object changed under it and
    persisted nothing: retry with the same backoff, logged at info (docs/retries.md).
    ``observed``: the resourceVersion of the object the reconcile read, for the debug line that
    says which change a reconcile acted on.
    """

    requeue_after: float | None = None
    error: str | None = None
    conflict: str | None = None
    observed: str | None = None
    held: str | None = None  # not reconciled: the watches it waits for (the manager re-adds it)


Reconcile = Callable[[str], Awaitable[Result | None]]


async def _process(
    queue: WorkQueue,
    key: str,
    reconcile: Reconcile,
    *,
    controller: str,
    metrics: Metrics,
    limiter: anyio.CapacityLimiter,
    token: object,
) -> None:
    start = time.perf_counter()
    clock = stages.ReconcileClock(controller, metrics.of(StageMetrics).reconcile)
    timed = stages.CURRENT.set(clock)  # this task's requests are timed on it (runtime/stages.py)
    try:
        result = await reconcile(key)
        if result is None or result.held is None:
            clock.finish()
    except Exception as err:
        refused = not_leader(err)
        if refused is not None:
            _not_leading(queue, key, refused, controller=controller, metrics=metrics)
            return
        # An unexpected exception: the traceback says where; the key says which object.
        _retry(
            queue, key, controller=controller, metrics=metrics, message="reconcile failed", err=err
        )
    else:
        if result is not None and result.held is not None:
            log.debug("held back", extra={"controller": controller, "key": key, "for": result.held})
            return
        if result is not None and result.error is not None:
            _retry(queue, key, controller=controller, metrics=metrics, message=result.error)
            return
        if result is not None and result.conflict is not None:
            _retry(
                queue,
                key,
                controller=controller,
                metrics=metrics,
                message=result.conflict,
                outcome="conflict",
            )
            return
        _succeeded(queue, key, result, controller=controller, metrics=metrics, start=start)
    finally:
        stages.CURRENT.reset(timed)
        metrics.of(ReconcileMetrics).reconcile_duration.observe(
            time.perf_counter() - start, controller=controller
        )
        queue.done(key)
        limiter.release_on_behalf_of(token)


def _not_leading(
    queue: WorkQueue, key: str, refused: BaseException, *, controller: str, metrics: Metrics
) -> None:
    """A write refused at the send (not leading): back in line, no failure counted."""
    queue.add(key)
    metrics.of(ReconcileMetrics).reconciles.inc(controller=controller, result="not_leader")
    log.info(
        "not leading: write not sent",
        extra={"controller": controller, "key": key, "error": str(refused)},
    )


def _succeeded(
    queue: WorkQueue,
    key: str,
    result: Result | None,
    *,
    controller: str,
    metrics: Metrics,
    start: float,
) -> None:
    queue.forget(key)
    requeue = result.requeue_after if result else None
    if requeue is not None:
        queue.add_after(key, requeue)
    outcome = "requeue" if requeue is not None else "success"
    metrics.of(ReconcileMetrics).reconciles.inc(controller=controller, result=outcome)
    # One line per reconcile, as controller-runtime's at debug: what ran, and when it woke.
    extra = {
        "controller": controller,
        "key": key,
        "result": outcome,
        "seconds": round(time.perf_counter() - start, 4),
    }
    if result is not None and result.observed is not None:
        extra["resourceVersion"] = result.observed
    log.debug("reconciled", extra=extra)


def _retry(
    queue: WorkQueue,
    key: str,
    *,
    controller: str,
    metrics: Metrics,
    message: str,
    err: Exception | None = None,
    outcome: str = "error",
) -> None:
    delay = queue.add_rate_limited(key)
    metrics.of(ReconcileMetrics).reconciles.inc(controller=controller, result=outcome)
    log.log(
        logging.INFO if outcome == "conflict" else logging.ERROR,
        message,
        exc_info=err,
        extra={"controller": controller, "key": key, "retry_in": round(delay, 3)},
    )


async def run_workers(
    queue: WorkQueue,
    reconcile: Reconcile,
    *,
    concurrency: int,
    controller: str | None = None,
    metrics: Metrics | None = None,
) -> None:
    """Reconcile keys until the queue shuts down, then wait for the reconciles in flight."""
    if concurrency < 1:
        raise ValueError(f"workers: concurrency must be at least 1, got {concurrency}")
    metrics = metrics or default_metrics()
    limiter = anyio.CapacityLimiter(concurrency)
    name = controller or queue.name
    async with anyio.create_task_group() as tg:
        while True:
            token = object()
            await limiter.acquire_on_behalf_of(token)
            try:
                key = await queue.get()
            except QueueShutDown:
                limiter.release_on_behalf_of(token)
                return
            tg.start_soon(
                lambda k=key, t=token: _process(
                    queue,
                    k,
                    reconcile,
                    controller=name,
                    metrics=metrics,
                    limiter=limiter,
                    token=t,
                ),
                name=f"reconcile {name} {key}",
            )


# A resync re-queues its keys spread over the period, a share every RESYNC_STEP seconds: all at
# once, a pass of 1,000 graphs and their 4,000 components queued ahead of any change made
# during it, which then waited seconds for its reconcile (issue 31).
RESYNC_STEP = 1.0


def resync_shares(keys: list[str], *, period: float, step: float = RESYNC_STEP) -> list[list[str]]:
    """``keys`` split into the shares of one resync, one share queued every ``step`` seconds
    or so (as many shares as whole steps fit in ``period``, at most one per key)."""
    count = max(1, min(len(keys), int(period / step)))
    return [keys[i::count] for i in range(count)]


async def resync_every(
    queue: WorkQueue, *, period: float, keys: Callable[[], Iterable[str]]
) -> None:
    """Re-enqueue every key from ``keys()`` once each ``period`` seconds, spread evenly over
    the period, until cancelled."""
    if period <= 0:
        raise ValueError(f"resync: period must be positive, got {period}")
    while not queue.shutting_down:
        shares = resync_shares(list(keys()), period=period)
        for share in shares:
            await anyio.sleep(period / len(shares))
            for key in share:
                queue.add(key)
