"""The agent's pools (runtime/connections.py) against a local HTTP/1.1 server that holds every
watch open: watches beyond the 100 connections of the request pool still start, and a request,
a Lease read and a review are answered meanwhile. httpx2_mock replaces the transport, pool and
all, so it could not show a pool running out; the server here is a real socket."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from syncagent.rest.request import Request
from syncagent.rest.transport import call, stream
from syncagent.runtime.connections import Clients, make_clients
from syncagent.runtime.metrics import Metrics

WATCHES = 150  # beyond the request pool's 100 connections


@asynccontextmanager
async def holding_server() -> AsyncIterator[tuple[int, list[int], asyncio.Event]]:
    """Answers a watch with its headers and then nothing; anything else with ``{}``. The
    event is set once ``WATCHES`` watches are open."""
    open_watches: list[int] = []
    every_watch = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if b"watch=true" in head.split(b"\r\n", 1)[0]:
                    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                    await writer.drain()
                    open_watches.append(1)
                    if len(open_watches) == WATCHES:
                        every_watch.set()
                    await reader.read()  # held until the client goes
                    return
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, backlog=512)
    async with server:
        yield server.sockets[0].getsockname()[1], open_watches, every_watch


def kubeconfig(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
    )
    return path


def get(path: str) -> Request:
    return Request("GET", path)


async def hold_watches(clients: Clients, count: int, *, task_status) -> None:
    async with anyio.create_task_group() as tg:
        for i in range(count):
            watch = Request("GET", f"/api/v1/namespaces/n{i}/secrets", params={"watch": "true"})

            async def hold(watch: Request = watch) -> None:
                async with stream(clients.watches, watch, request_timeout=60.0):
                    await anyio.sleep_forever()

            tg.start_soon(hold)
        task_status.started()


async def starts_and_answers(tmp_path: Path, *, sharing: bool) -> tuple[int, bool]:
    """How many of the watches started, and whether the requests were answered meanwhile."""
    async with holding_server() as (port, open_watches, every_watch):
        made = make_clients(kubeconfig=kubeconfig(tmp_path, port), metrics=Metrics())
        clients = Clients.sharing(made.requests) if sharing else made
        answered = False
        async with anyio.create_task_group() as tg:
            await tg.start(hold_watches, clients, WATCHES)
            with anyio.move_on_after(5):
                await every_watch.wait()
            with anyio.move_on_after(2):
                for client in (clients.requests, clients.lease, clients.reviews):
                    assert await call(client, get("/api/v1/namespaces/x")) == {}
                answered = True
            tg.cancel_scope.cancel()
        return len(open_watches), answered


def test_watches_beyond_the_request_pool_starve_no_request(tmp_path):
    assert anyio.run(lambda: starts_and_answers(tmp_path, sharing=False)) == (WATCHES, True)


def test_one_pool_for_everything_starves(tmp_path):
    """Why the pools: on one pool (main before issue 40) the watches take every connection,
    the rest of them never start and a request waits."""
    assert anyio.run(lambda: starts_and_answers(tmp_path, sharing=True)) == (100, False)
