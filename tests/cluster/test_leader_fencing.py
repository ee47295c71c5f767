"""Never two leaders (issue 27): two electors on the real API server, each through its own HTTP
proxy that journals every request it sends, each writing a ConfigMap as fast as it can while it
leads. The leader's Lease renewals are answered late, or not at all, by its proxy; no write of
the old leader may arrive after the new leader's first write, in every run, and the new leader
takes over within lease duration + retry period of the old leader's last stored renewal.

Fencing at the send (issue 40): the leader's event loop is blocked for longer than the renew
deadline right after a renewal, at the worst moment, just before a write goes out, with other
writes queued; none of them is sent after the deadline, and the other elector takes over. Each
writer's client carries its elector's fence, as the manager's does."""

from __future__ import annotations

import math
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from lightkube import KubeConfig

from syncagent.kube.kinds import CONFIG_MAP
from syncagent.rest.request import build
from syncagent.rest.transport import call
from syncagent.runtime import fencing, leaseclock
from syncagent.runtime.client import http_for
from syncagent.runtime.leader import LeaderElector, LeadershipLost, LeaseConfig
from syncagent.runtime.metrics import Metrics
from tests.support.httpfaults import Arrival, HttpFaultProxy
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio

LEASE, RENEW, RETRY = 3.0, 2.0, 0.5
ROUNDS = int(os.environ.get("SYNCAGENT_LEADER_ROUNDS", "3"))
LEASES = r"/leases/"
IN_FLIGHT = 0.3  # a write sent just before the deadline, read by the proxy thread
# The scenarios: how the proxy answers one renewal of the leader (the server stores it at
# once), after which every later Lease request of the leader is held unanswered.
ANSWER_DELAY = {
    # Confirmed while the previous renewal still counts (renew deadline - retry period): the
    # leader's deadline moves to this renewal's send time + renew deadline.
    "delayed": 0.6 * RENEW,
    "held": math.inf,  # never confirmed while it matters
}


class Writer:
    """An elector talking through its own proxy; while it leads it writes without pause."""

    def __init__(
        self,
        proxy: HttpFaultProxy,
        client: httpx2.AsyncClient,
        namespace: str,
        lease: str,
        *,
        lease_clock: Callable[[], float] = leaseclock.now,
    ):
        self.proxy = proxy
        self.identity = f"writer-{id(self)}"
        cfg = LeaseConfig(
            namespace=namespace,
            name=lease,
            identity=self.identity,
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
            release_on_cancel=False,
        )
        self.elector = LeaderElector(client, cfg, metrics=Metrics(), lease_clock=lease_clock)
        fencing.install(client, self.elector.fence)
        self._client = client
        self._namespace = namespace
        self._name = f"{lease}-writes"
        self.error: BaseException | None = None
        self.stopped = anyio.Event()
        self.stopped_at = math.inf  # time.monotonic()

    async def run(self) -> None:
        try:
            await self.elector.run(self._lead)
        except LeadershipLost as err:
            self.error = err
        finally:
            self.stopped_at = time.monotonic()
            self.stopped.set()

    async def _lead(self) -> None:
        await self.write_forever()

    async def write_forever(self) -> None:
        n = 0
        while True:
            n += 1
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": self._name},
                "data": {"writer": self.identity, "n": str(n)},
            }
            request = build(
                CONFIG_MAP,
                "apply",
                namespace=self._namespace,
                name=self._name,
                body=body,
                field_manager=self.identity,
                force=True,
            )
            await call(self._client, request)

    def writes(self) -> list[Arrival]:
        """Every write this writer sent, by the time its proxy read it (Leases aside)."""
        return [r for r in self.proxy.requests if r.method != "GET" and "/leases" not in r.target]

    def lease_puts(self) -> list[Arrival]:
        return [r for r in self.proxy.requests if r.method == "PUT" and "/leases/" in r.target]


@asynccontextmanager
async def writer(control_plane, namespace: str, lease: str) -> AsyncIterator[Writer]:
    with HttpFaultProxy(control_plane) as proxy:
        config = proxy.kubeconfig()
        client = http_for(KubeConfig.from_file(str(config)).get(), timeout=httpx2.Timeout(10.0))
        try:
            yield Writer(proxy, client, namespace, lease)
        finally:
            proxy.release()  # answer what is still held before the client goes
            await client.aclose()
            config.unlink(missing_ok=True)


async def one_failover(control_plane, namespace: str, lease: str, delay: float) -> dict:
    async with (
        writer(control_plane, namespace, lease) as old,
        writer(control_plane, namespace, lease) as new,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(old.run)
        await eventually_async(lambda: old.writes(), deadline=20, what="the first writer to lead")
        tg.start_soon(new.run)
        await eventually_async(
            lambda: new.elector.decided, deadline=20, what="the second writer to follow"
        )
        await eventually_async(
            lambda: len(old.lease_puts()) >= 2, deadline=20, what="two renewals by the leader"
        )
        old.proxy.delay_answer("PUT", LEASES, delay, then_hold=LEASES)
        await eventually_async(lambda: new.writes(), deadline=30, what="the follower to lead")
        await eventually_async(
            lambda: old.stopped.is_set(), deadline=RENEW + 1, what="the old leader to stop"
        )
        tg.cancel_scope.cancel()
    assert isinstance(old.error, LeadershipLost), old.error
    assert old.proxy.delayed, "the leader's renewal was never delayed"
    first_new = new.writes()[0].at
    last_old = old.writes()[-1].at
    last_renewal = old.proxy.delayed[-1].at  # the last one the server stored
    # The last renewal the old leader saw confirmed: the delayed one when its answer came in
    # time, else the one before it.
    before = [p.at for p in old.lease_puts() if p.at < last_renewal][-1]
    confirmed = last_renewal if math.isfinite(delay) else before
    return {
        "old_stopped_after_confirmed": last_old - confirmed,
        "old_writes": len(old.writes()),
        "old_after_new": sum(1 for w in old.writes() if w.at >= first_new),
        "overlap": last_old - first_new,
        "failover": first_new - last_renewal,
    }


@pytest.mark.parametrize("answer", sorted(ANSWER_DELAY))
async def test_the_old_leader_never_writes_after_the_new_leaders_first_write(
    control_plane, namespace, answer
):
    runs = [
        await one_failover(control_plane, namespace, f"fence-{i}", ANSWER_DELAY[answer])
        for i in range(ROUNDS)
    ]
    print(f"leader fencing ({answer}): {runs}")
    for run in runs:
        assert run["old_writes"] > 0
        # The old leader never wrote once the new leader had, and stopped writing when its
        # renew deadline ran out, counted from the send of its last confirmed renewal (a write
        # sent just before the deadline reaches the proxy a moment later).
        assert run["old_after_new"] == 0, runs
        assert run["old_stopped_after_confirmed"] <= RENEW + IN_FLIGHT, runs
        assert run["failover"] <= LEASE + RETRY, runs


STALL = 1.5 * RENEW  # the event loop blocked: a GC pause, a huge answer, CPU throttling
LOOPS = 4  # write loops of the leader: while one stalls, the others' writes are queued


class StallingWriter(Writer):
    """A writer whose event loop blocks for :data:`STALL` seconds right after a renewal, just
    before one of its writes is sent (httpcore's trace, under the fence's own check)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.stalled_at: float | None = None  # time.monotonic() when the stall ended
        self._armed = False
        fencing_hooks = self._client.event_hooks
        self._client.event_hooks = {
            **fencing_hooks,
            "request": [*fencing_hooks["request"], self._stall_before_send],
        }

    async def _lead(self) -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(LOOPS):
                tg.start_soon(self.write_forever)
            first = self.elector.last_renew
            await eventually_async(
                lambda: self.elector.last_renew != first, deadline=10, what="a renewal"
            )
            self._armed = True

    async def _stall_before_send(self, request) -> None:
        if not self._armed or "/leases" in request.url.path or request.method == "GET":
            return
        self._armed = False
        inner = request.extensions.get("trace")  # the fence's check runs after the stall

        async def trace(event: str, info: dict) -> None:
            if event.endswith(".send_request_headers.started") and self.stalled_at is None:
                time.sleep(STALL)  # noqa: ASYNC251 - blocking the event loop is the fault here
                self.stalled_at = time.monotonic()
            if inner is not None:
                await inner(event, info)

        request.extensions["trace"] = trace


async def _hand_over(control_plane, namespace, name, make_old, *, stopping: str):
    """Run the leader ``make_old`` builds until it stops (``stopping``) and a follower takes
    over; both writers, once they are done."""
    async with (
        writer(control_plane, namespace, name) as follower,
        anyio.create_task_group() as tg,
    ):
        with HttpFaultProxy(control_plane) as proxy:
            config = proxy.kubeconfig()
            client = http_for(KubeConfig.from_file(str(config)).get(), timeout=httpx2.Timeout(10.0))
            try:
                old = make_old(proxy, client, namespace, name)
                tg.start_soon(old.run)
                await eventually_async(lambda: old.writes(), deadline=20, what="the first leader")
                tg.start_soon(follower.run)
                await eventually_async(lambda: old.stopped.is_set(), deadline=20, what=stopping)
                await eventually_async(
                    lambda: follower.writes(), deadline=20, what="the follower to take over"
                )
                tg.cancel_scope.cancel()
            finally:
                await client.aclose()
                config.unlink(missing_ok=True)
    return old, follower


async def test_a_stalled_leader_sends_no_write_after_its_deadline(control_plane, namespace):
    old, follower = await _hand_over(
        control_plane, namespace, "stall", StallingWriter, stopping="the stalled leader to stop"
    )
    assert isinstance(old.error, LeadershipLost), old.error
    assert old.stalled_at is not None, "the leader's event loop was never stalled"
    assert old.elector.last_renew is not None
    # The old leader's deadline (leadership clock) on the proxy's clock (time.monotonic).
    deadline = old.elector.last_renew + RENEW - (leaseclock.now() - time.monotonic())
    late = [w.at - deadline for w in old.writes() if w.at > deadline + IN_FLIGHT]
    first_new = follower.writes()[0].at
    print(
        f"stalled leader: {len(old.writes())} writes, the stall ended "
        f"{old.stalled_at - deadline:.3f}s after the deadline, {old.elector.fence.refused} "
        f"refused at the send, the follower's first write {first_new - deadline:.3f}s after it"
    )
    assert old.stalled_at > deadline, "the stall did not outlast the deadline"
    assert late == [], f"writes sent after the deadline (seconds late): {late}"
    assert old.elector.fence.refused >= 1, "the stalled write was not refused at its send"
    assert all(w.at < first_new for w in old.writes())


class SuspendingWriter(Writer):
    """A writer whose machine is suspended for :data:`STALL` seconds right after a renewal:
    its leadership clock (CLOCK_BOOTTIME) jumps, its event loop's clock (CLOCK_MONOTONIC) does
    not, as on a real suspend."""

    def __init__(self, *args: object) -> None:
        self.suspended = 0.0
        self.resumed_at: float | None = None  # time.monotonic() at the jump
        self.renewed_before: float | None = None  # the last renewal's send before it
        super().__init__(*args, lease_clock=lambda: leaseclock.now() + self.suspended)

    async def _lead(self) -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(LOOPS):
                tg.start_soon(self.write_forever)
            first = self.elector.last_renew
            await eventually_async(
                lambda: self.elector.last_renew != first, deadline=10, what="a renewal"
            )
            self.renewed_before = self.elector.last_renew  # unjumped
            self.suspended = STALL
            self.resumed_at = time.monotonic()


async def test_a_suspended_leader_sends_no_write_after_it_wakes(control_plane, namespace):
    old, follower = await _hand_over(
        control_plane, namespace, "suspend", SuspendingWriter, stopping="the woken leader to stop"
    )
    assert isinstance(old.error, LeadershipLost), old.error
    assert old.resumed_at is not None
    assert old.renewed_before is not None
    # The deadline on the event loop's clock: the suspend never happened for it.
    loop_deadline = old.renewed_before + RENEW - (leaseclock.now() - time.monotonic())
    late = [w.at - old.resumed_at for w in old.writes() if w.at > old.resumed_at + IN_FLIGHT]
    print(
        f"suspended leader: {len(old.writes())} writes, {old.elector.fence.refused} refused "
        f"at the send, stopped {old.stopped_at - old.resumed_at:.3f}s after waking, "
        f"{loop_deadline - old.stopped_at:.3f}s before its event loop's deadline"
    )
    assert late == [], f"writes sent after waking past the deadline (seconds after): {late}"
    assert old.elector.fence.refused >= 1
    assert old.stopped_at < loop_deadline, "leading ended by the loop's clock, not the lease's"
    assert all(w.at < follower.writes()[0].at for w in old.writes())
