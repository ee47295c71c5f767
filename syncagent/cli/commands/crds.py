"""``syncagent crds``: print (or write) our CRDs, generated from the models: what it does (flags: ``syncagent.cli.crds``)."""

from __future__ import annotations

import argparse
import sys

import orjson

from syncagent.api import crdgen


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
