import os
import signal

import anyio
import pytest

from syncagent.runtime.shutdown import ForcedShutdown, Shutdown, watch_signals

pytestmark = pytest.mark.anyio


async def test_first_signal_requests_shutdown_second_forces():
    shutdown = Shutdown()
    forced = []
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(watch_signals, shutdown)
            os.kill(os.getpid(), signal.SIGTERM)
            with anyio.fail_after(5):
                await shutdown.wait()
            assert shutdown.reason == "SIGTERM"
            os.kill(os.getpid(), signal.SIGINT)
            with anyio.fail_after(5):
                await anyio.sleep_forever()
    except* ForcedShutdown as group:
        forced.extend(group.exceptions)
    assert [str(e) for e in forced] == ["second signal SIGINT while shutting down"]


async def test_request_is_idempotent_and_wait_returns_after():
    shutdown = Shutdown()
    shutdown.request("first")
    shutdown.request("second")
    assert shutdown.reason == "first"
    with anyio.fail_after(1):
        await shutdown.wait()
