"""``syncagent render``: the objects a program (Grove, DisaggregatedSet or Component) would: what it does (flags: ``syncagent.cli.render``)."""

from __future__ import annotations

import argparse

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
from syncagent.cli.inputs import read_input, warn_unknown_fields
from syncagent.cli.render_programs import choose
from syncagent.programs import capabilities
from syncagent.programs.program import Program
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
            chosen = _check_graph(obj, ref=ref, namespace=namespace, caps=caps, program=program)
            # The renderers copy each component as parsed: parse the sparse wire form once
            # more so that copy is the normalised manifest (converted, namespace defaulted).
            graph = DynamoGraphDeployment.model_validate(body)
            return chosen.render(graph, env=env, caps=caps)
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
) -> Program:
    problems = validate_graph(graph, namespace=namespace)
    if problems:
        raise UserError(f"{ref}: {problems_message(problems)}")
    annotations = graph.metadata.annotations or {}
    components = graph.to_dict()["spec"].get("components") or []
    return choose(program, annotations=annotations, components=components, caps=caps, ref=ref)


def format_output(rendered: list[Rendered], *, output: str) -> str:
    if output == "json":
        items = [{"manager": r.manager, "object": r.create_manifest()} for r in rendered]
        return orjson.dumps(items, option=orjson.OPT_INDENT_2).decode() + "\n"
    docs = [HEADER + "\n"]
    for r in rendered:
        text = yaml.safe_dump(r.create_manifest(), sort_keys=True, default_flow_style=False)
        docs.append(f"---\n# manager: {r.manager}\n{text}")
    return "".join(docs)
