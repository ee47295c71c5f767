"""``syncagent crds``: print (or write) our CRDs, generated from the models: what it does (flags: ``syncagent.cli.crds``)."""

from __future__ import annotations

import argparse
import sys

import orjson

from syncagent.api import crdgen
from syncagent.cli.errors import UserError


def run(args: argparse.Namespace) -> int:
    if args.dir:
        try:
            written = crdgen.write(args.dir, pathways=args.programs.pathways)
        except OSError as err:
            reason = err.strerror or str(err)
            raise UserError(
                f"--dir {args.dir}: cannot write the CRD files there ({reason}); "
                "give a directory (it is created if missing)"
            ) from None
        for path in written:
            print(path)
        return 0
    crds = crdgen.all_crds(pathways=args.programs.pathways)
    if args.output == "json":
        body = {"apiVersion": "v1", "kind": "List", "items": crds}
        sys.stdout.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write("---\n".join(crdgen.to_yaml(c) for c in crds))
    return 0
