"""``syncagent render``: the objects a program (Grove, DisaggregatedSet or Component) would
apply, offline."""

from __future__ import annotations

import argparse
from typing import Any

import orjson
import yaml

from syncagent.api import (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    LoadError,
    load_documents,
    problems_message,
    validate_component_deployment,
    validate_graph,
)
from syncagent.api.schemas import objects_checked
from syncagent.cli.errors import UserError
from syncagent.cli.flags import add_capability_argument
from syncagent.cli.inputs import read_input, warn_unknown_fields
from syncagent.cli.render_programs import PROGRAMS, forced_pathway, render_pathway
from syncagent.programs import capabilities, routing
from syncagent.render import (
    PLACEHOLDER_UID,
    Environment,
    Rendered,
    RenderError,
    render_standalone,
    source_of_object,
)

HEADER = (
    f"# ownerReferences carry the placeholder uid {PLACEHOLDER_UID}: offline, the owners "
    "do not exist yet"
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "render",
        help="print the objects a graph renders to, offline (no cluster)",
        description=(
            "Print every object a program would apply for a DynamoGraphDeployment, each with "
            "its field manager: Grove (a PodCliqueSet), DisaggregatedSet (a DisaggregatedSet "
            "plus DynamoComponentDeployments for the other components) or Component "
            "(DynamoComponentDeployments, Deployments, LeaderWorkerSets), plus Services and "
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
        default="kubernetes",
        help="the agent's default discovery backend, for components that set none "
        "(default: kubernetes)",
    )
    add_capability_argument(parser, offline=True)
    parser.add_argument(
        "--program",
        choices=PROGRAMS,
        default="auto",
        help="the program to render a graph with; auto routes it as the agent would "
        "(spec/routing.md §2) (default: auto)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = capabilities.capability_overrides(args.capability, offline=True)
        docs = load_documents(read_input(args.filename), source=args.filename)
        warn_unknown_fields(docs)
        objects = objects_checked(docs, source=args.filename)
    except (ValueError, LoadError) as err:
        raise UserError(str(err)) from None
    caps = capabilities.offline(settings)
    env = Environment(discovery_backend=args.discovery_backend)
    rendered: list[Rendered] = []
    for obj in objects:
        if args.namespace and not obj.metadata.namespace:
            obj.metadata.namespace = args.namespace
        rendered += render_object(obj, caps=caps, env=env, program=args.program)
    print(format_output(rendered, output=args.output), end="")
    return 0


def render_object(
    obj: DynamoGraphDeployment | DynamoComponentDeployment,
    *,
    caps: capabilities.Capabilities,
    env: Environment | None = None,
    program: str = "auto",
) -> list[Rendered]:
    """What the routed (or ``program``) program applies for one object; UserError when it cannot.

    ``env`` describes the namespace; the default is an empty one (no pull Secrets, no
    labelled ServiceAccounts, no ready checkpoints, Kubernetes discovery).
    """
    env = env or Environment()
    namespace = obj.metadata.namespace or "default"
    ref = f"{obj.kind}/{namespace}/{obj.metadata.name}"
    body = obj.to_dict()
    body.setdefault("metadata", {})["namespace"] = namespace
    try:
        if isinstance(obj, DynamoGraphDeployment):
            pathway = _check_graph(obj, ref=ref, namespace=namespace, caps=caps, program=program)
            return render_pathway(body, pathway, env=env, lws=caps.lws)
        problems = validate_component_deployment(obj)
        if problems:
            raise UserError(f"{ref}: {problems_message(problems)}")
        return render_standalone(source_of_object(body), env=env, lws=caps.lws)
    except RenderError as err:
        raise UserError(f"{ref}: {err.message}") from None


def _check_graph(
    graph: DynamoGraphDeployment,
    *,
    ref: str,
    namespace: str,
    caps: capabilities.Capabilities,
    program: str = "auto",
) -> routing.Pathway:
    problems = validate_graph(graph, namespace=namespace)
    if problems:
        raise UserError(f"{ref}: {problems_message(problems)}")
    annotations = graph.metadata.annotations or {}
    components = graph.to_dict()["spec"].get("components") or []
    selection = routing.select_pathway(
        annotations,
        caps,
        recorded=None,
        ds_reason=lambda: routing.ds_ineligibility(components, caps),
    )
    if program == "auto":
        return selection.pathway
    return forced_pathway(program, components=components, caps=caps, ref=ref)


def format_output(rendered: list[Rendered], *, output: str) -> str:
    if output == "json":
        items = [{"manager": r.manager, "object": r.create_manifest()} for r in rendered]
        return orjson.dumps(items, option=orjson.OPT_INDENT_2).decode() + "\n"
    docs = [HEADER + "\n"]
    for r in rendered:
        text = yaml.safe_dump(r.create_manifest(), sort_keys=True, default_flow_style=False)
        docs.append(f"---\n# manager: {r.manager}\n{text}")
    return "".join(docs)
