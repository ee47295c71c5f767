"""``syncagent render``: the objects a program would apply, offline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from syncagent.cli.flags import add_capability_argument
from syncagent.cli.lazy import lazy
from syncagent.cli.operatorconfigfile import add_operator_config_argument

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry


def register(subparsers: Any, programs: Registry) -> None:
    parser = subparsers.add_parser(
        "render",
        help="print the objects a graph renders to, offline (no cluster)",
        description=(
            "Print every object a program would apply for a DynamoGraphDeployment, each with "
            f"its field manager: {programs.summary()}, plus Services and "
            "the discovery identity. The graph is routed as the agent would route it unless "
            "--program names one. A standalone DynamoComponentDeployment renders as the "
            "Component program applies it. Reads no cluster: every capability is assumed "
            "available unless switched off with --capability."
        ),
    )
    parser.add_argument("-f", "--filename", required=True, metavar="FILE|-", help="manifest")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    parser.add_argument(
        "-n",
        "--namespace",
        help="namespace for objects whose manifest names none (default: default)",
    )
    parser.add_argument(
        "--discovery-backend",
        choices=("kubernetes", "etcd"),
        default=None,
        help="the agent's default discovery backend, for components that set none "
        "(default: the --operator-config file's discovery.backend, else kubernetes)",
    )
    add_operator_config_argument(parser)
    add_capability_argument(parser, declared=programs.capabilities(), offline=True)
    parser.add_argument(
        "--program",
        choices=("auto", *sorted(programs.names)),
        default="auto",
        help="the program to render a graph with; auto routes it as the agent would "
        "(docs/routing.md §2) (default: auto)",
    )
    parser.set_defaults(func=lazy(f"{__name__}.offline"))
