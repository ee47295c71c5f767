"""``syncagent plan``: what the agent would do for a graph, from server dry runs only."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from syncagent.cli.flags import add_capability_argument, add_connection_arguments
from syncagent.cli.lazy import lazy
from syncagent.cli.operatorconfigfile import add_operator_config_argument

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry

DESCRIPTION = """\
Show exactly what the agent would do for a graph: per object created, configured, unchanged,
conflict or would-delete, with a diff of the live object against the server's dry-run result
(server defaults never show as changes), the conflicts and their owners, and any takeover of
fields written by the upstream Dynamo operator (docs/ownership.md; what other writers such as
kubectl added stays theirs and never shows as removed). Runs the agent's own programs and field
managers with server-side dry runs only: it never writes.

exit codes: 0 no changes, 2 changes, 1 error."""


def register(subparsers: Any, programs: Registry) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="show what the agent would do for a graph (dry runs only, never writes)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-f", "--filename", required=True, metavar="FILE|DIR|-", help="graph manifest(s)"
    )
    add_connection_arguments(parser, impersonate=True)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.add_argument("--no-diff", action="store_true", help="list objects without diffs")
    parser.add_argument(
        "--discovery-backend",
        choices=("kubernetes", "etcd"),
        default=None,
        help="the agent's --discovery-backend (default: the --operator-config file's "
        "discovery.backend, else kubernetes)",
    )
    add_operator_config_argument(parser)
    add_capability_argument(parser, declared=programs.capabilities())
    parser.set_defaults(func=lazy(f"{__name__}.dryrunplan"))
