"""``syncagent managers``: the field managers on a graph's objects, checked against contracts."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from syncagent.cli.flags import add_connection_arguments
from syncagent.cli.lazy import lazy

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry

DESCRIPTION = """\
List the field managers on a graph and every object it owns (directly or through its
DynamoComponentDeployments), with the bytes metadata.managedFields takes per object, checked
against the declarations in fieldmanagers/: paths, kinds and operations outside a manager's
contract, undeclared syncagent managers, stale entries (fields the upstream Dynamo operator
wrote, which a takeover adopts; per-owner managers whose owner left) and a missing ownership
entry. Other writers' entries (kubectl label/annotate/patch, other controllers) are theirs.

exit codes: 0 no findings, 2 findings, 1 error."""


def register(subparsers: Any, programs: Registry) -> None:
    parser = subparsers.add_parser(
        "managers",
        help="check the field managers on a graph's objects against their contracts",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("graph", metavar="DGD", help="DynamoGraphDeployment name")
    add_connection_arguments(parser, impersonate=True)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.set_defaults(func=lazy(f"{__name__}.graphmanagers"))
