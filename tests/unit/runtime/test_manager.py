import socket

import anyio
import httpx2
import pytest
from lightkube import KubeConfig
from lightkube.config.models import Cluster, User

from syncagent.rest.request import build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call
from syncagent.runtime.client import http_for
from syncagent.runtime.fencing import NotLeader
from syncagent.runtime.leader import LeaseConfig
from syncagent.runtime.manager import Manager, ManagerOptions, sole_exception
from syncagent.runtime.metrics import Metrics

pytestmark = pytest.mark.anyio

CONFIG_MAP_RESOURCE = Resource.of("v1", "ConfigMap", "configmaps")


def offline_client() -> httpx2.AsyncClient:
    # Never contacted: the run fails before the first request.
    config = KubeConfig.from_one(
        cluster=Cluster(server="https://127.0.0.1:1"), user=User(token="t")
    )
    return http_for(config.get(), timeout=httpx2.Timeout(10.0))


async def test_a_taken_metrics_port_is_raised_as_itself():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        options = ManagerOptions(metrics_address=f"127.0.0.1:{port}", handle_signals=False)
        manager = Manager(offline_client(), options, metrics=Metrics())
        with pytest.raises(OSError, match="ddress already in use"), anyio.fail_after(5):
            await manager.run()


def test_sole_exception_unwraps_one_nested_leaf_only():
    err = ValueError("x")
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [err])])
    assert sole_exception(nested) is err
    two = ExceptionGroup("two", [ValueError("a"), KeyError("b")])
    assert sole_exception(two) is two


async def test_with_a_lease_the_managers_client_sends_no_write_while_it_does_not_lead():
    lease = LeaseConfig(namespace="ns", identity="me")
    manager = Manager(offline_client(), ManagerOptions(lease=lease), metrics=Metrics())
    write = build(CONFIG_MAP_RESOURCE, "create", namespace="ns", body={"metadata": {"name": "c"}})
    with pytest.raises(NotLeader, match=r"^Lease/ns/syncagent: POST .* not sent"):
        await call(manager.client, write)  # refused before any connection is tried
    without = Manager(offline_client(), ManagerOptions(), metrics=Metrics())
    with pytest.raises(httpx2.ConnectError):  # no Lease, no fence: it is sent (nobody listens)
        await call(without.client, write)


def test_a_manager_lists_every_runtime_family_before_its_first_sample():
    metrics = Metrics()
    Manager(offline_client(), ManagerOptions(), metrics=metrics)
    text = metrics.render()
    for family in (
        "syncagent_reconcile_total",
        "syncagent_graph_change_to_status_seconds",
        "syncagent_workqueue_depth",
        "syncagent_api_requests_total",
        "syncagent_api_retries_total",
        "syncagent_watch_relists_total",
        "syncagent_watch_unsynced",
        "syncagent_events_total",
        "syncagent_leader",
        "syncagent_capability",
        "syncagent_memo_entries",
        "syncagent_reconcile_stage_seconds",
    ):
        assert f"# TYPE {family} " in text, family
