"""``syncagent conflicts``: the fields a graph's applies would take from other managers."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from syncagent.cli.flags import add_capability_argument, add_connection_arguments
from syncagent.cli.lazy import lazy

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry

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


def register(subparsers: Any, programs: Registry) -> None:
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
    add_capability_argument(parser, declared=programs.capabilities())
    parser.set_defaults(func=lazy(f"{__name__}.graphconflicts"))
