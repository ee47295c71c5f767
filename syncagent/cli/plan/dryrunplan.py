"""``syncagent plan``: what the agent would do for a graph, from server dry runs only: what it does (flags: ``syncagent.cli.plan``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from httpx2 import AsyncClient

from syncagent.api import LoadError, load_documents
from syncagent.api.load import is_ours, object_ref
from syncagent.api.schemas import parse_checked
from syncagent.cli.errors import UserError
from syncagent.cli.flags import connection
from syncagent.cli.manifestfile import read_input, warn_unknown_fields
from syncagent.cli.operatorconfigfile import (
    discovery_backend,
    infrastructure_of,
    offline_operator_config,
)
from syncagent.inspect import report
from syncagent.inspect.planner import PlanError, plan_documents
from syncagent.inspect.session import (
    InspectError,
    default_namespace,
    open_client,
    run_async,
)
from syncagent.programs import capabilities


def run(args: argparse.Namespace) -> int:
    operator_config = offline_operator_config(args.operator_config)
    backend = discovery_backend(args.discovery_backend, operator_config)
    try:
        settings = capabilities.capability_overrides(
            args.capability, declared=args.programs.capabilities()
        )
    except ValueError as err:
        raise UserError(str(err)) from None
    docs = read_documents(args.filename)
    namespace = default_namespace(connection(args))

    async def work(client: AsyncClient) -> report.Plan:
        # The graph itself is applied by the user, not the agent: dry-run it without --as.
        user = open_client(connection(args), impersonate=False) if args.as_user else None
        try:
            run_ = await plan_documents(
                client,
                docs,
                namespace=namespace,
                settings=settings,
                programs=args.programs,
                discovery_backend=backend,
                infrastructure=infrastructure_of(operator_config),
                input_client=user,
            )
        except PlanError as err:
            raise InspectError(str(err)) from None
        finally:
            if user is not None:
                await user.aclose()
        return report.build(run_)

    try:
        plan = run_async(connection(args), work)
    except InspectError as err:
        raise UserError(str(err)) from None
    text = (
        report.to_json(plan)
        if args.output == "json"
        else report.to_text(plan, show_diff=not args.no_diff)
    )
    print(text, end="")
    return plan.exit_code


def read_documents(path: str) -> list[dict[str, Any]]:
    """The DGD and DCD documents of a file, every ``*.yaml|*.yml|*.json`` of a directory, or
    stdin; each validated like the agent validates it."""
    try:
        sources = _sources(path)
        docs: list[dict[str, Any]] = []
        for source, text in sources:
            found = load_documents(text, source=source)
            for doc in found:
                _require_ours(doc, source=source)
                parse_checked(doc, source=source)
            warn_unknown_fields(found)
            docs += found
    except LoadError as err:
        raise UserError(str(err)) from None
    if not docs:
        raise UserError(f"{path}: no DynamoGraphDeployment or DynamoComponentDeployment found")
    return docs


def _sources(path: str) -> list[tuple[str, str]]:
    if path != "-" and Path(path).is_dir():
        files = sorted(
            p
            for p in Path(path).iterdir()
            if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
        )
        return [(str(p), read_input(str(p))) for p in files]
    return [(path, read_input(path))]


def _require_ours(doc: dict[str, Any], *, source: str) -> None:
    if not is_ours(doc):
        raise LoadError(
            f"{object_ref(doc)} in {source}: kind {doc.get('kind')} ({doc.get('apiVersion')}) "
            "is not a DynamoGraphDeployment or DynamoComponentDeployment; plan takes graphs only"
        )
