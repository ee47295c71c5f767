"""The runtime through an API server outage: a TCP proxy the test controls goes away and
comes back; the shared control plane itself is never touched."""

from pathlib import Path
from urllib.parse import urlsplit

import anyio
import anyio.abc
import httpx2
import pytest
import yaml
from lightkube import KubeConfig

from syncagent.kube.kinds import CONFIG_MAP
from syncagent.runtime.backoff import Backoff
from syncagent.runtime.client import http_for
from syncagent.runtime.metrics import Metrics
from syncagent.runtime.watch import Informer, WatchTarget
from tests.cluster.support.runtime import config_map, create
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio


class Proxy:
    """Forwards 127.0.0.1:<port> to the API server; ``stop`` cuts every connection."""

    def __init__(self, upstream: str) -> None:
        url = urlsplit(upstream)
        self.host, self.upstream_port = url.hostname, url.port
        self.port = 0
        self.scope: anyio.CancelScope | None = None

    async def run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        self.scope = anyio.CancelScope()
        with self.scope:
            listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
            async with listener:
                self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
                task_status.started()
                await listener.serve(self._forward)

    def stop(self) -> None:
        assert self.scope is not None
        self.scope.cancel()

    async def _forward(self, client: anyio.abc.SocketStream) -> None:
        async with (
            client,
            await anyio.connect_tcp(self.host, self.upstream_port) as upstream,
            anyio.create_task_group() as tg,
        ):

            async def pipe(src, dst) -> None:
                try:
                    async for chunk in src:
                        await dst.send(chunk)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(pipe, client, upstream)
            tg.start_soon(pipe, upstream, client)


def client_through(proxy: Proxy, kubeconfig: Path, folder: Path) -> httpx2.AsyncClient:
    """A client whose kubeconfig points at the proxy (the server certificate covers 127.0.0.1;
    the control plane's kubeconfig names its files by absolute path)."""
    doc = yaml.safe_load(kubeconfig.read_text())
    for entry in doc["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{proxy.port}"
    path = folder / "kubeconfig-via-proxy"
    path.write_text(yaml.safe_dump(doc))
    return http_for(KubeConfig.from_file(path).get(), timeout=httpx2.Timeout(10.0))


async def test_informer_recovers_after_the_api_server_was_unreachable(
    control_plane, async_client, namespace, tmp_path
):
    proxy = Proxy(control_plane.server)
    async with anyio.create_task_group() as tg:
        await tg.start(proxy.run)
        client = client_through(proxy, control_plane.kubeconfig, tmp_path)
        informer = Informer(
            client,
            WatchTarget(CONFIG_MAP, namespace=namespace),
            metrics=Metrics(),
            backoff=Backoff(base=0.1, cap=1.0),
        )
        await tg.start(informer.run)
        with anyio.fail_after(10):
            await informer.cache.wait_synced()

        proxy.stop()
        # Changes while the server is unreachable for the agent.
        await create(async_client, config_map(namespace, "during"))
        await eventually_async(lambda: informer.failures >= 3, deadline=10, what="failed retries")
        assert informer.cache.get(namespace, "during") is None

        await tg.start(proxy.run)  # same port: the server is back
        await eventually_async(
            lambda: informer.cache.get(namespace, "during") is not None,
            deadline=10,
            what="the change made during the outage",
        )
        assert informer.failures == 0
        await create(async_client, config_map(namespace, "after"))
        await eventually_async(
            lambda: informer.cache.get(namespace, "after") is not None, deadline=10, what="after"
        )
        tg.cancel_scope.cancel()
    await client.aclose()
