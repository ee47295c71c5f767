"""``syncagent managers``: the field managers on a graph's objects, checked against contracts."""

from __future__ import annotations

import argparse
from typing import Any

from lightkube import AsyncClient

from syncagent.cli.errors import UserError
from syncagent.cli.flags import add_connection_arguments, connection
from syncagent.inspect import managers
from syncagent.inspect.live import ReadError, read_graph
from syncagent.inspect.planengine import PlanEngine
from syncagent.inspect.planner import PlanError, read_store
from syncagent.inspect.session import (
    InspectError,
    default_namespace,
    run_async,
)

DESCRIPTION = """\
List the field managers on a graph and every object it owns (directly or through its
DynamoComponentDeployments), with the bytes metadata.managedFields takes per object, checked
against the declarations in fieldmanagers/: paths, kinds and operations outside a manager's
contract, undeclared syncagent managers, stale entries (fields the upstream Dynamo operator
wrote, which a takeover adopts; per-owner managers whose owner left) and a missing ownership
entry. Other writers' entries (kubectl label/annotate/patch, other controllers) are theirs.

exit codes: 0 no findings, 2 findings, 1 error."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "managers",
        help="check the field managers on a graph's objects against their contracts",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("graph", metavar="DGD", help="DynamoGraphDeployment name")
    add_connection_arguments(parser, impersonate=True)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    namespace = default_namespace(connection(args))

    async def work(client: AsyncClient) -> list[managers.ObjectReport]:
        try:
            graph = await read_graph(client, args.graph, namespace=namespace)
            engine = PlanEngine(client)
            try:
                store = await read_store(engine, namespace)
            finally:
                engine.release()
        except (ReadError, PlanError) as err:
            raise InspectError(str(err)) from None
        everything = [o for objs in store.objects.values() for o in objs]
        return managers.check_graph(graph, everything)

    try:
        reports = run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
    print(managers.to_json(reports) if args.output == "json" else managers.to_text(reports), end="")
    return 2 if any(r.findings for r in reports) else 0
