"""``syncagent blame``: who owns each line of an object, with which operation, since when."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from syncagent.cli.flags import add_connection_arguments
from syncagent.cli.lazy import lazy

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry

DESCRIPTION = """\
Print an object as YAML with each line's field managers, their operation (Apply/Update, and the
subresource) and age, read from metadata.managedFields. Lines owned by several managers list
them all (co-owners); list items are shown with the key server-side apply uses for them
(containers[name=main], ports[port=8000,protocol=TCP]). With -f, read a saved object
(kubectl get -o yaml --show-managed-fields) instead of the live one.

With --history, print each field's owners over time instead: every change of hands the agent
saw since it started (or since the object was created), with the value before and after for
fields the agent renders. The agent keeps that history in memory and serves it as the aggregated
API history.syncagent.io/v1alpha1 (resource ownershiphistories); this reads it through the API
server with your credentials (token, client certificate, exec plugin: whatever the kubeconfig
holds). It needs get on ownershiphistories.history.syncagent.io in the object's namespace (the
chart aggregates it into the view ClusterRole) and get on the object itself."""


def register(subparsers: Any, programs: Registry) -> None:
    parser = subparsers.add_parser(
        "blame",
        help="show who owns each field of an object",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", nargs="?", metavar="KIND/NAME", help="for example deploy/web")
    parser.add_argument("-f", "--filename", metavar="FILE|-", help="a saved object instead")
    add_connection_arguments(parser, impersonate=False)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.add_argument(
        "--history",
        action="store_true",
        help="each field's owners over time, from the agent's ownership history",
    )
    parser.set_defaults(func=lazy(f"{__name__}.objectsource"))
