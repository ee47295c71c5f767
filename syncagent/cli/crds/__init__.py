"""``syncagent crds``: print (or write) our CRDs, generated from the models."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from syncagent.cli.lazy import lazy

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], programs: Registry) -> None:
    parser = sub.add_parser(
        "crds",
        help="print the DynamoGraphDeployment and DynamoComponentDeployment CRDs",
        description=(
            "Print our CRDs (generated from syncagent's models), ready for kubectl apply "
            "--server-side -f -."
        ),
    )
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    parser.add_argument(
        "--dir", type=Path, metavar="DIR", help="write one file per CRD into DIR instead"
    )
    parser.set_defaults(func=lazy(f"{__name__}.printcrds"))
