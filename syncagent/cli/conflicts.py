"""``syncagent conflicts``: the fields a graph's applies would take from other managers."""

from __future__ import annotations

import argparse
from typing import Any

from lightkube import ApiError, AsyncClient

from syncagent.cli.errors import UserError
from syncagent.cli.flags import add_capability_argument, add_connection_arguments, connection
from syncagent.inspect import conflicts
from syncagent.inspect.fights import FightRow, read_fights
from syncagent.inspect.live import ReadError, read_graph
from syncagent.inspect.planner import PlanError, plan_live_graph
from syncagent.inspect.session import (
    InspectError,
    default_namespace,
    run_async,
)
from syncagent.programs import capabilities

DESCRIPTION = """\
Dry-run, without force, every object the graph's program would apply, and list each field
another manager owns with a different value: the path (list items by key, such as
ports[port=8000,protocol=TCP]), the owning manager and its operation, our value and the live
value, and the remedy: take-over (a field the upstream Dynamo operator wrote, which the agent
adopts), force (what the agent does, a kubectl hand edit included; yield the field to keep the
other value), hand-over (replicas under an autoscaler: two steps, no value reset). Then the
field fights the agent declared (read from its FieldFight Events on the graph, about the last
hour): another manager kept taking fields back, so the agent leaves them alone for a backoff.
Never writes.

exit codes: 0 no conflicts and no fights, 2 conflicts or fights, 1 error."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conflicts",
        help="list the fields a graph's applies would take from other managers, with remedies",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("graph", metavar="DGD", help="DynamoGraphDeployment name")
    add_connection_arguments(parser, impersonate=True)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.add_argument("--discovery-backend", choices=("kubernetes", "etcd"), default="kubernetes")
    add_capability_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = capabilities.capability_overrides(args.capability)
    except ValueError as err:
        raise UserError(str(err)) from None
    namespace = default_namespace(connection(args))
    subject = f"DynamoGraphDeployment/{namespace}/{args.graph}"

    async def work(client: AsyncClient) -> tuple[list[conflicts.ConflictRow], list[FightRow]]:
        try:
            graph = await read_graph(client, args.graph, namespace=namespace)
            run_ = await plan_live_graph(
                client, graph, settings=settings, discovery_backend=args.discovery_backend
            )
            fought = await read_fights(client, graph)
        except (ReadError, PlanError) as err:
            raise InspectError(str(err)) from None
        except ApiError as err:
            raise InspectError(f"{subject}: cannot list its Events: {err}") from None
        return conflicts.rows(run_.engine.records), fought

    try:
        found, fought = run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
    render = conflicts.to_json if args.output == "json" else conflicts.to_text
    print(render(found, graph=subject, fights=fought), end="")
    return 2 if found or fought else 0
