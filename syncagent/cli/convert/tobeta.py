"""``syncagent convert -f FILE|-``: v1alpha1 DGD/DCD manifests to v1beta1, offline: what it does (flags: ``syncagent.cli.convert``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson
import yaml

from syncagent.api.conversion import ConversionError, convert_documents
from syncagent.api.graph import DynamoGraphDeployment
from syncagent.api.load import LoadError, is_ours, load_documents
from syncagent.api.schemas import parse_checked
from syncagent.api.validation import Problem, validate_graph
from syncagent.cli.errors import UserError
from syncagent.cli.manifestfile import read_input, warn_unknown_fields


def run(args: argparse.Namespace) -> int:
    source = "stdin" if args.filename == "-" else args.filename
    try:
        docs = load_documents(read_input(args.filename), source=source)
        if not docs:
            raise UserError(
                f"{source}: empty input, nothing to convert; give a file with v1alpha1 "
                "DynamoGraphDeployment or DynamoComponentDeployment documents"
            )
        result = convert_documents(docs)
        _check(result.documents, source=source)
    except (LoadError, ConversionError) as err:
        raise UserError(str(err)) from None
    for line in result.warnings:
        print(line, file=sys.stderr)
    warn_unknown_fields(result.documents)
    if not result.converted:
        print(
            f"warning: {source}: no v1alpha1 DynamoGraphDeployment or DynamoComponentDeployment "
            "found; the documents are printed unchanged",
            file=sys.stderr,
        )
    if args.strict and result.warnings:
        raise UserError(
            f"{source}: {len(result.warnings)} field(s) would be dropped (--strict); "
            "remove them from the input or run without --strict"
        )
    sys.stdout.write(render(result.documents, output=args.output))
    return 0


def _check(documents: list[dict[str, Any]], *, source: str) -> None:
    """Converted graphs must parse and pass the rules that need no cluster context."""
    for doc in documents:
        if not is_ours(doc):
            continue
        obj = parse_checked(doc, source=source)
        if not isinstance(obj, DynamoGraphDeployment):
            continue
        problems = [p for p in validate_graph(obj, dcd_components=()) if _applies(p, obj)]
        if problems:
            detail = "; ".join(str(p) for p in problems)
            raise UserError(f"{problems[0].object_ref}: invalid after conversion: {detail}")


def _applies(problem: Problem, graph: DynamoGraphDeployment) -> bool:
    # The Dynamo namespace length depends on the namespace, unknown until applied.
    return problem.rule != "V17" or bool(graph.metadata.namespace)


def render(documents: list[dict[str, Any]], *, output: str) -> str:
    if output == "json":
        body: Any = (
            documents[0]
            if len(documents) == 1
            else {"apiVersion": "v1", "kind": "List", "items": documents}
        )
        return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"
    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False, width=1000)
