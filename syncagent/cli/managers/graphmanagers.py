"""``syncagent managers``: the field managers on a graph's objects, checked against contracts: what it does (flags: ``syncagent.cli.managers``)."""

from __future__ import annotations

import argparse

from httpx2 import AsyncClient

from syncagent.cli.errors import UserError
from syncagent.cli.flags import connection
from syncagent.cli.managers import managerchecks
from syncagent.inspect.live import ReadError, read_graph
from syncagent.inspect.planner import PlanError, read_store
from syncagent.inspect.session import (
    InspectError,
    default_namespace,
    run_async,
)
from syncagent.ssa import Engine


def run(args: argparse.Namespace) -> int:
    namespace = default_namespace(connection(args))

    async def work(client: AsyncClient) -> list[managerchecks.ObjectReport]:
        try:
            graph = await read_graph(client, args.graph, namespace=namespace)
            # A dry-run engine: reading the store never writes, nothing to release afterwards.
            store = await read_store(Engine(client), namespace, programs=args.programs)
        except (ReadError, PlanError) as err:
            raise InspectError(str(err)) from None
        everything = [o for objs in store.objects.values() for o in objs]
        programs = args.programs
        return managerchecks.check_graph(
            graph,
            everything,
            declared=programs.field_managers(),
            policy=programs.takeover_policy,
        )

    try:
        reports = run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
    print(
        managerchecks.to_json(reports) if args.output == "json" else managerchecks.to_text(reports),
        end="",
    )
    return 2 if any(r.findings for r in reports) else 0
