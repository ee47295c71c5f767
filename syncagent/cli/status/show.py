"""``syncagent status``: what it does (flags: ``syncagent.cli.status``)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import orjson
import yaml
from httpx2 import AsyncClient

from syncagent.cli.errors import UserError
from syncagent.cli.flags import connection
from syncagent.cli.status import cleantext, jsondocument, reading, terminal, treenodes
from syncagent.inspect.session import InspectError, default_namespace, run_async
from syncagent.kube import kinds

# Changes come in bursts (a rollout touches a Deployment, its ReplicaSets and pods at once):
# one redraw per burst, not one per event.
COALESCE = 0.2


def run(args: argparse.Namespace) -> int:
    conn = connection(args)
    namespace = default_namespace(conn)
    view = View(args.graph, namespace, window=timedelta(seconds=args.since), output=args.output)
    try:
        if args.watch:
            run_async(conn, lambda client: watch(client, view))
            return 0
        objects = run_async(conn, lambda client: reading.read_once(client, namespace))
    except InspectError as err:
        raise UserError(cleantext.clean(str(err))) from None
    root = view.tree(objects)
    if root is None:
        raise UserError(
            f"{view.subject}: not found in namespace {namespace}; check the name and -n/--namespace"
        )
    view.print(root, terminal.console())
    return 0


class View:
    """The tree of one graph from the objects of its namespace, and its printed forms."""

    def __init__(self, graph: str, namespace: str, *, window: timedelta, output: str) -> None:
        self.graph, self.namespace, self.window, self.output = graph, namespace, window, output
        self.subject = f"{kinds.DGD.kind}/{namespace}/{graph}"

    def tree(self, objects: list[dict[str, Any]]) -> treenodes.Node | None:
        graphs = [
            o
            for o in objects
            if o.get("kind") == kinds.DGD.kind and o["metadata"]["name"] == self.graph
        ]
        if not graphs:
            return None
        events = [o for o in objects if o.get("kind") == "Event"]
        rest = [o for o in objects if o.get("kind") != "Event"]
        now = datetime.now(UTC)
        root = treenodes.build(graphs[0], rest, events, now=now, window=self.window)
        # Every string of every output mode comes from this tree: cleaned once, here.
        return cleantext.cleaned(root)

    def document(self, root: treenodes.Node) -> dict[str, Any]:
        now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        return jsondocument.document(root, namespace=self.namespace, generated=now)

    def print(self, root: treenodes.Node, console: Any, *, one_line: bool = False) -> None:
        if self.output == "json":
            option = 0 if one_line else orjson.OPT_INDENT_2
            sys.stdout.write(orjson.dumps(self.document(root), option=option).decode() + "\n")
        elif self.output == "yaml":
            sys.stdout.write(yaml.safe_dump(self.document(root), sort_keys=False))
        else:
            console.print(terminal.render(root))
        sys.stdout.flush()


async def watch(client: AsyncClient, view: View) -> None:
    kinds = await reading.served_kinds(client, view.namespace)
    watched = reading.Watched(client, kinds, view.namespace)
    changed = _Signal()
    watched.on_change(changed.set)
    console = terminal.console()
    async with anyio.create_task_group() as tg:
        await watched.start(tg)
        with terminal.Screen(console, live=view.output == "text") as screen:
            last: object = None
            while True:
                root = view.tree(watched.objects())
                key = None if root is None else jsondocument.node_dict(root)
                if key != last:
                    last = key
                    _show(view, root, screen)
                await changed.wait()
                await anyio.sleep(COALESCE)


def _show(view: View, root: treenodes.Node | None, screen: terminal.Screen) -> None:
    if root is None and view.output != "text":
        # stdout carries documents only; the absence is said on stderr.
        print(f"{view.subject}: not found; waiting for it to be created", file=sys.stderr)
    elif root is None:
        screen.show(terminal.missing(view.subject))
    elif view.output == "text":
        screen.show(terminal.render(root))
    else:
        view.print(root, screen.console, one_line=view.output == "json")


class _Signal:
    """Set by the informers' handlers (plain calls), awaited by the redraw loop."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event = anyio.Event()
