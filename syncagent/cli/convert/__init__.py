"""``syncagent convert -f FILE|-``: v1alpha1 DGD/DCD manifests to v1beta1, offline."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from syncagent.cli.lazy import lazy

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], programs: Registry) -> None:
    parser = sub.add_parser(
        "convert",
        help="convert v1alpha1 DynamoGraphDeployments to v1beta1 (offline)",
        description=(
            "Convert nvidia.com/v1alpha1 DynamoGraphDeployment and DynamoComponentDeployment "
            "documents (the services map) to v1beta1. Other documents pass through unchanged, "
            "in order. Dropped fields are reported on stderr as warnings."
        ),
    )
    parser.add_argument("-f", "--filename", required=True, metavar="FILE", help="input, - = stdin")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    parser.add_argument(
        "--strict", action="store_true", help="treat dropped fields as errors (exit code 1)"
    )
    parser.set_defaults(func=lazy(f"{__name__}.tobeta"))
