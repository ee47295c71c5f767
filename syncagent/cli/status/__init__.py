"""``syncagent status``: a graph's live objects as a tree, once or redrawn on every change."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from syncagent.cli.flags import add_connection_arguments, duration
from syncagent.cli.lazy import lazy

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry

DESCRIPTION = """\
Print a graph as a tree: the graph, the program serving it, its DynamoComponentDeployments,
DisaggregatedSet or PodCliqueSet, their workloads, Services and pods. Each node shows whether
it is ready (and why not: a condition, the events of the last --since), its controller and its
field managers; a Service shows which workloads its selector matches (during a cutover, which
of the two serves). Reads with namespaced list and watch only: a user with read rights in the
namespace can run it (--as to check). -w redraws on every change the watches report.
Colour only on a terminal; NO_COLOR switches it off. The -o json document:
docs/status.md.

exit codes: 0 the tree was printed (ready or not: read "ready" of -o json), 1 error."""


def register(subparsers: Any, programs: Registry) -> None:
    parser = subparsers.add_parser(
        "status",
        help="show a graph's objects as a tree: ready or why not, controllers, managers",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("graph", metavar="DGD", help="DynamoGraphDeployment name")
    add_connection_arguments(parser, impersonate=True)
    parser.add_argument("-o", "--output", choices=("text", "yaml", "json"), default="text")
    parser.add_argument(
        "-w",
        "--watch",
        action="store_true",
        help="redraw on every change (text: in place on a terminal; json: one document a line)",
    )
    parser.add_argument(
        "--since",
        type=duration,
        default=900.0,
        metavar="DURATION",
        help="show events seen within this long (default 15m)",
    )
    parser.set_defaults(func=lazy(f"{__name__}.show"))
