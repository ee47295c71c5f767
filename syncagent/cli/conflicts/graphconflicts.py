"""``syncagent conflicts``: the fields a graph's applies would take from other managers: what it does (flags: ``syncagent.cli.conflicts``)."""

from __future__ import annotations

import argparse

from httpx2 import AsyncClient
from lightkube import ApiError

from syncagent.cli.conflicts import conflictrows
from syncagent.cli.conflicts.fightevents import FightRow, read_fights
from syncagent.cli.errors import UserError
from syncagent.cli.flags import connection
from syncagent.inspect.live import ReadError, read_graph
from syncagent.inspect.planner import PlanError, plan_live_graph
from syncagent.inspect.session import (
    InspectError,
    default_namespace,
    run_async,
)
from syncagent.programs import capabilities


def run(args: argparse.Namespace) -> int:
    try:
        settings = capabilities.capability_overrides(
            args.capability, declared=args.programs.capabilities()
        )
    except ValueError as err:
        raise UserError(str(err)) from None
    namespace = default_namespace(connection(args))
    subject = f"DynamoGraphDeployment/{namespace}/{args.graph}"

    async def work(client: AsyncClient) -> tuple[list[conflictrows.ConflictRow], list[FightRow]]:
        try:
            graph = await read_graph(client, args.graph, namespace=namespace)
            run_ = await plan_live_graph(
                client,
                graph,
                settings=settings,
                programs=args.programs,
                discovery_backend=args.discovery_backend,
            )
            fought = await read_fights(client, graph)
        except (ReadError, PlanError) as err:
            raise InspectError(str(err)) from None
        except ApiError as err:
            raise InspectError(f"{subject}: cannot list its Events: {err}") from None
        policy = args.programs.takeover_policy
        return conflictrows.rows(run_.applier.records, policy=policy), fought

    try:
        found, fought = run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
    render = conflictrows.to_json if args.output == "json" else conflictrows.to_text
    print(render(found, graph=subject, fights=fought), end="")
    return 2 if found or fought else 0
