import socket

import anyio
import pytest
from lightkube import AsyncClient, KubeConfig
from lightkube.config.models import Cluster, User

from syncagent.runtime.manager import Manager, ManagerOptions, sole_exception
from syncagent.runtime.metrics import Metrics

pytestmark = pytest.mark.anyio


def offline_client() -> AsyncClient:
    # Never contacted: the run fails before the first request.
    config = KubeConfig.from_one(
        cluster=Cluster(server="https://127.0.0.1:1"), user=User(token="t")
    )
    return AsyncClient(config, trust_env=False)


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
