"""``syncagent blame``: who owns each line of an object, with which operation, since when: what it does (flags: ``syncagent.cli.blame``)."""

from __future__ import annotations

import argparse
from typing import Any

import httpx2
from httpx2 import AsyncClient

from syncagent.api import LoadError, load_documents
from syncagent.cli.blame import ownedlines
from syncagent.cli.errors import UserError
from syncagent.cli.flags import connection
from syncagent.cli.manifestfile import read_input
from syncagent.inspect.kinds import UnknownKindError, split_target
from syncagent.inspect.live import ReadError, read_target
from syncagent.inspect.session import (
    InspectError,
    default_namespace,
    run_async,
)


def run(args: argparse.Namespace) -> int:
    if not args.target and not args.filename:
        raise UserError("blame: give KIND/NAME, or -f FILE with a saved object")
    if args.history:
        from syncagent.cli.commands import blame_history

        return blame_history.run(args)
    obj = saved(args) if args.filename else live(args)
    lines = ownedlines.blame_lines(obj)
    print(ownedlines.to_json(lines) if args.output == "json" else ownedlines.to_text(lines), end="")
    return 0


def saved(args: argparse.Namespace) -> dict[str, Any]:
    try:
        docs = load_documents(read_input(args.filename), source=args.filename)
    except LoadError as err:
        raise UserError(str(err)) from None
    items = [i for d in docs for i in (d.get("items") or [] if d.get("kind") == "List" else [d])]
    if args.target:
        kind, name = _split(args.target)
        named = [i for i in items if (i.get("metadata") or {}).get("name") == name]
        exact = [i for i in named if str(i.get("kind", "")).lower() == kind.lower()]
        # Offline there is no discovery to expand short names (svc, deploy): a unique name will do.
        items = exact or (named if len(named) == 1 else [])
    if not items:
        raise UserError(f"{args.filename}: no object{' ' + args.target if args.target else ''}")
    if not (items[0].get("metadata") or {}).get("managedFields"):
        raise UserError(
            f"{args.filename}: the object has no metadata.managedFields; save it with "
            "kubectl get -o yaml --show-managed-fields"
        )
    return items[0]


def _split(target: str) -> tuple[str, str]:
    try:
        return split_target(target)
    except UnknownKindError as err:
        raise UserError(str(err)) from None


def live(args: argparse.Namespace) -> dict[str, Any]:
    kind, name = _split(args.target)

    async def work(client: AsyncClient) -> dict[str, Any]:
        try:
            return await read_target(
                client, kind, name, namespace=default_namespace(connection(args))
            )
        except (UnknownKindError, ReadError) as err:
            raise InspectError(str(err)) from None
        except httpx2.HTTPStatusError as err:
            raise InspectError(f"{args.target}: discovery failed: {err}") from None

    try:
        return run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
