"""The run loop against a real API server: probes, metrics, leadership, graceful shutdown."""

import time

import anyio
import pytest

from syncagent.cli.pathways import PROGRAMS
from syncagent.kube.kinds import CONFIG_MAP
from syncagent.programs import capabilities as caps
from syncagent.rest.request import build
from syncagent.rest.transport import call
from syncagent.runtime.cache import enqueue, self_key
from syncagent.runtime.leader import LEASE, LeaseConfig, micro_time
from syncagent.runtime.manager import Manager, ManagerOptions
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.watch import WatchTarget
from tests.cluster.support.runtime import config_map, create, lease
from tests.support.polling import eventually_async
from tests.support.rawhttp import fetch, get

pytestmark = pytest.mark.anyio


class Agent:
    """A Manager reconciling labelled ConfigMaps of one namespace; it records what it did."""

    def __init__(self, client, namespace: str, identity: str, *, gate: anyio.Event | None = None):
        lease = LeaseConfig(
            namespace=namespace,
            name="agent",
            identity=identity,
            lease_duration=3.0,
            renew_deadline=2.0,
            retry_period=0.5,
        )
        options = ManagerOptions(
            metrics_address="127.0.0.1:0",
            lease=lease,
            handle_signals=False,
            shutdown_grace=10,
            group_versions=PROGRAMS.group_versions(),
            resolve=caps.resolver(
                caps.capability_overrides((), declared=PROGRAMS.capabilities()),
                declared=PROGRAMS.capabilities(),
            ),
        )
        self.manager = Manager(client, options, metrics=Metrics())
        self.reconciled: list[str] = []
        self.finished: list[str] = []
        self.gate = gate
        cache = None

        async def reconcile(key: str) -> None:
            self.reconciled.append(key)
            if self.gate is not None:
                await self.gate.wait()
            self.finished.append(key)

        queue = self.manager.add_controller(
            "configmaps",
            reconcile,
            concurrency=2,
            resync_period=60,
            keys=lambda: cache.keys() if cache is not None else [],
        )
        target = WatchTarget(CONFIG_MAP, namespace=namespace, label_selector="app=agent")
        cache = self.manager.watches.add(target, handlers=[enqueue(queue.add, self_key)])
        self.done = anyio.Event()

    async def run(self) -> None:
        try:
            await self.manager.run()
        finally:
            self.done.set()

    @property
    def leading(self) -> bool:
        return self.manager.elector is not None and self.manager.elector.is_leader


async def test_one_agent_reconciles_probes_and_metrics(async_client, namespace):
    await create(async_client, config_map(namespace, "one", labels={"app": "agent"}))
    await create(async_client, config_map(namespace, "ignored", labels={"app": "other"}))
    agent = Agent(async_client, namespace, "solo")
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run)
        await eventually_async(lambda: agent.manager.port is not None, deadline=10, what="the port")
        port = agent.manager.port
        status, _, _ = await fetch(port, get("/healthz"))
        assert status == 200

        async def ready() -> bool:
            return (await fetch(port, get("/readyz")))[0] == 200

        await eventually_async(ready, deadline=10, what="/readyz")
        await eventually_async(
            lambda: f"{namespace}/one" in agent.finished, deadline=10, what="one"
        )
        await create(async_client, config_map(namespace, "two", labels={"app": "agent"}))
        await eventually_async(
            lambda: f"{namespace}/two" in agent.finished, deadline=10, what="two"
        )
        assert f"{namespace}/ignored" not in agent.reconciled

        status, _, text = await fetch(port, get("/metrics"))
        assert status == 200
        assert 'syncagent_reconcile_total{controller="configmaps",result="success"}' in text
        assert 'syncagent_leader{lease="' + namespace + '/agent"} 1' in text
        assert 'syncagent_capability{name="lws"} 1' in text

        agent.manager.shutdown.request("test")
        with anyio.fail_after(10):
            await agent.done.wait()
    spec = (await lease(async_client, namespace))["spec"]
    assert not spec.get("holderIdentity")  # released on shutdown


async def test_two_agents_only_the_leader_reconciles_and_shutdown_drains_then_hands_over(
    async_client, namespace
):
    await create(async_client, config_map(namespace, "cm", labels={"app": "agent"}))
    gate = anyio.Event()
    a = Agent(async_client, namespace, "a", gate=gate)
    b = Agent(async_client, namespace, "b", gate=gate)
    async with anyio.create_task_group() as tg:
        tg.start_soon(a.run)
        tg.start_soon(b.run)
        await eventually_async(lambda: a.leading or b.leading, deadline=15, what="a leader")
        leader, follower = (a, b) if a.leading else (b, a)
        await eventually_async(
            lambda: leader.reconciled == [f"{namespace}/cm"], deadline=10, what="cm"
        )
        # A follower becomes ready too: caches synced, leadership decided (as follower).
        await eventually_async(
            lambda: follower.manager.health.ready()[0], deadline=10, what="follower ready"
        )
        assert not follower.leading
        assert follower.reconciled == []

        # Shutdown with a reconcile in flight: no new keys, the in-flight one finishes, and
        # only then is the Lease released.
        leader.manager.shutdown.request("test")
        assert not leader.manager.health.ready()[0]
        assert (await lease(async_client, namespace))["spec"]["holderIdentity"] == (
            leader.manager.options.lease.identity
        )
        assert not leader.done.is_set()
        gate.set()
        with anyio.fail_after(10):
            await leader.done.wait()
        assert leader.finished == [f"{namespace}/cm"]

        # The follower takes over at once (released Lease) and reconciles every key.
        await eventually_async(lambda: follower.leading, deadline=5, what="the handover")
        await eventually_async(
            lambda: follower.finished == [f"{namespace}/cm"], deadline=10, what="follower work"
        )
        follower.manager.shutdown.request("test")
        with anyio.fail_after(10):
            await follower.done.wait()
        tg.cancel_scope.cancel()


async def test_a_leader_that_loses_the_lease_stops_and_campaigns_again(async_client, namespace):
    agent = Agent(async_client, namespace, "a")
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run)
        await eventually_async(lambda: agent.leading, deadline=15, what="leadership")
        # Someone takes the Lease by force; the agent cannot renew and stops leading ...
        current = await lease(async_client, namespace)
        current["spec"]["holderIdentity"] = "intruder"
        current["spec"]["renewTime"] = micro_time(time.time())
        update = build(LEASE, "update", namespace=namespace, name="agent", body=current)
        await call(async_client, update)
        await eventually_async(lambda: not agent.leading, deadline=5, what="the agent to step down")
        assert not agent.done.is_set()  # the process keeps running
        # ... and leads again once the intruder's lease expires, with working queues.
        await eventually_async(lambda: agent.leading, deadline=10, what="leadership again")
        await create(async_client, config_map(namespace, "after", labels={"app": "agent"}))
        await eventually_async(
            lambda: f"{namespace}/after" in agent.finished, deadline=10, what="work after"
        )
        agent.manager.shutdown.request("test")
        with anyio.fail_after(10):
            await agent.done.wait()
        tg.cancel_scope.cancel()
