import time

import anyio
import pytest

from syncagent.rest.request import build
from syncagent.rest.transport import call
from syncagent.runtime.leader import (
    LEASE,
    LeaderElector,
    LeadershipLost,
    LeaseConfig,
    micro_time,
)
from syncagent.runtime.metrics import Metrics
from tests.cluster.support.runtime import lease
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio

TIMINGS = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.5}


def config(namespace: str, identity: str, **extra) -> LeaseConfig:
    return LeaseConfig(namespace=namespace, name="agent", identity=identity, **{**TIMINGS, **extra})


class Candidate:
    """An elector whose lead() runs until its scope is cancelled, recording leadership."""

    def __init__(self, client, cfg: LeaseConfig) -> None:
        self.elector = LeaderElector(client, cfg, metrics=Metrics())
        self.scope = anyio.CancelScope()
        self.led = False
        self.error: BaseException | None = None
        self.stopped = anyio.Event()

    async def run(self) -> None:
        async def lead() -> None:
            self.led = True
            await anyio.sleep_forever()

        with self.scope:
            try:
                await self.elector.run(lead)
            except LeadershipLost as err:
                self.error = err
        self.stopped.set()


async def test_exactly_one_leads_and_the_other_takes_over_when_renewals_stop(
    async_client, namespace
):
    a = Candidate(async_client, config(namespace, "a", release_on_cancel=False))
    b = Candidate(async_client, config(namespace, "b", release_on_cancel=False))
    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run)
        tg.start_soon(b.run)
        await eventually_async(
            lambda: a.elector.is_leader or b.elector.is_leader, deadline=10, what="a leader"
        )
        leader, follower = (a, b) if a.elector.is_leader else (b, a)
        await eventually_async(lambda: follower.elector.decided, deadline=10, what="a follower")

        # Through several renewals: never two leaders, and the Lease names the leader.
        renewals: set[str] = set()

        async def renewed_three_times() -> bool:
            assert not (a.elector.is_leader and b.elector.is_leader)
            spec = (await lease(async_client, namespace))["spec"]
            assert spec["holderIdentity"] == leader.elector.config.identity
            renewals.add(spec["renewTime"])
            return len(renewals) >= 3

        await eventually_async(renewed_three_times, deadline=10, what="three renewals")
        assert not follower.elector.is_leader
        assert not follower.led

        # The leader stops renewing (no release): the follower takes over once the lease
        # expires, within lease duration + retry period of the last renewal.
        leader.scope.cancel()
        await leader.stopped.wait()
        started = anyio.current_time()
        await eventually_async(
            lambda: follower.elector.is_leader,
            deadline=TIMINGS["lease_duration"] + TIMINGS["retry_period"],
            what="the follower to take over",
        )
        took = anyio.current_time() - started
        assert took > 1.0  # it waited for the lease to expire
        spec = (await lease(async_client, namespace))["spec"]
        assert spec["holderIdentity"] == follower.elector.config.identity
        assert spec["leaseTransitions"] == 1
        assert spec["leaseDurationSeconds"] == 3
        tg.cancel_scope.cancel()


async def test_release_on_shutdown_hands_over_at_once(async_client, namespace):
    a = Candidate(async_client, config(namespace, "a"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run)
        await eventually_async(lambda: a.elector.is_leader, deadline=10, what="a to lead")
        b = Candidate(async_client, config(namespace, "b"))
        tg.start_soon(b.run)
        await eventually_async(lambda: b.elector.decided, deadline=10, what="b to follow")
        assert not b.elector.is_leader
        a.scope.cancel()
        await a.stopped.wait()
        released = (await lease(async_client, namespace))["spec"]
        assert "holderIdentity" not in released or released["holderIdentity"] in ("", None)
        # Released: no waiting for expiry, only for b's next try.
        await eventually_async(
            lambda: b.elector.is_leader, deadline=TIMINGS["retry_period"] + 1.0, what="handover"
        )
        tg.cancel_scope.cancel()


async def test_leader_steps_down_at_once_when_a_read_shows_another_holder(async_client, namespace):
    a = Candidate(async_client, config(namespace, "a"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run)
        await eventually_async(lambda: a.led, deadline=10, what="a to lead")
        # Someone else takes the Lease by force (as after a network partition).
        current = await lease(async_client, namespace)
        current["spec"]["holderIdentity"] = "intruder"
        current["spec"]["renewTime"] = micro_time(time.time())
        update = build(LEASE, "update", namespace=namespace, name="agent", body=current)
        await call(async_client, update)
        # a's next renewal reads the Lease, sees the intruder and cancels its work then, well
        # before its renew deadline (it would otherwise keep leading beside the intruder).
        started = anyio.current_time()
        await eventually_async(
            lambda: a.stopped.is_set(),
            deadline=TIMINGS["retry_period"] + 1.0,
            what="a to step down",
        )
        took = anyio.current_time() - started
        assert took < TIMINGS["renew_deadline"]
        tg.cancel_scope.cancel()
    assert isinstance(a.error, LeadershipLost)
    assert str(a.error).startswith(f"Lease/{namespace}/agent: the Lease is held by intruder")
    assert not a.elector.is_leader
    # It did not release a Lease it no longer holds.
    assert (await lease(async_client, namespace))["spec"]["holderIdentity"] == "intruder"
