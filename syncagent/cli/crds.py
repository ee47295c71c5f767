"""``syncagent crds``: print (or write) our CRDs, generated from the models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from syncagent.api import crdgen


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.dir:
        for path in crdgen.write(args.dir):
            print(path)
        return 0
    crds = crdgen.all_crds()
    if args.output == "json":
        body = {"apiVersion": "v1", "kind": "List", "items": crds}
        sys.stdout.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write("---\n".join(crdgen.to_yaml(c) for c in crds))
    return 0
