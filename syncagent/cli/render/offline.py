"""``syncagent render``: the objects a program would apply, offline: what it does (flags: ``syncagent.cli.render``)."""

from __future__ import annotations

import argparse

import orjson
import yaml

from syncagent.api import (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    LoadError,
    Problem,
    load_documents,
    problems_message,
    validate_component_deployment,
    validate_graph,
)
from syncagent.api.schemas import objects_checked
from syncagent.cli.errors import UserError
from syncagent.cli.manifestfile import read_input, warn_unknown_fields
from syncagent.cli.operatorconfigfile import (
    discovery_backend,
    infrastructure_of,
    offline_operator_config,
)
from syncagent.cli.render.choose import choose
from syncagent.programs import capabilities
from syncagent.programs.program import Program
from syncagent.programs.registry import Registry
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
    operator_config = offline_operator_config(args.operator_config)
    try:
        settings = capabilities.capability_overrides(
            args.capability, declared=args.programs.capabilities(), offline=True
        )
        docs = load_documents(read_input(args.filename), source=args.filename)
        warn_unknown_fields(docs)
        objects = objects_checked(docs, source=args.filename)
    except (ValueError, LoadError) as err:
        raise UserError(str(err)) from None
    caps = capabilities.offline(settings, declared=args.programs.capabilities())
    env = Environment(
        discovery_backend=discovery_backend(args.discovery_backend, operator_config),
        infrastructure=infrastructure_of(operator_config),
    )
    rendered: list[Rendered] = []
    for obj in objects:
        if args.namespace and not obj.metadata.namespace:
            obj.metadata.namespace = args.namespace
        rendered += render_object(
            obj, caps=caps, env=env, programs=args.programs, program=args.program
        )
    print(format_output(rendered, output=args.output), end="")
    return 0


def render_object(
    obj: DynamoGraphDeployment | DynamoComponentDeployment,
    *,
    caps: capabilities.Capabilities,
    programs: Registry,
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
            chosen = _check_graph(
                obj, ref=ref, namespace=namespace, caps=caps, programs=programs, program=program
            )
            # The renderers copy each component as parsed: parse the sparse wire form once
            # more so that copy is the normalised manifest (converted, namespace defaulted).
            graph = DynamoGraphDeployment.model_validate(body)
            return chosen.functions.render(graph, env=env, caps=caps)
        problems = validate_component_deployment(obj)
        if problems:
            raise UserError(f"{ref}: {problems_message(problems)}")
        return render_standalone(source_of_object(body), env=env, lws=caps.has(capabilities.LWS))
    except RenderError as err:
        raise UserError(f"{ref}: {err.message}") from None


def _check_graph(
    graph: DynamoGraphDeployment,
    *,
    ref: str,
    namespace: str,
    caps: capabilities.Capabilities,
    programs: Registry,
    program: str = "auto",
) -> Program:
    # The LeaderWorkerSet name rule (V16) holds only for components the chosen program renders
    # as DCDs, as in the agent: a long graph name is valid on Grove, whose PodCliqueSet name is
    # shortened (upstream admits and renders it). Every other rule first, then the program's.
    _refuse(validate_graph(graph, namespace=namespace, dcd_components=()), ref=ref)
    annotations = graph.metadata.annotations or {}
    components = graph.to_dict()["spec"].get("components") or []
    chosen = choose(
        program,
        programs=programs,
        annotations=annotations,
        components=components,
        caps=caps,
        ref=ref,
    )
    dcd_components = chosen.functions.dcd_components(graph.spec.components)
    _refuse(validate_graph(graph, namespace=namespace, dcd_components=dcd_components), ref=ref)
    return chosen


def _refuse(problems: list[Problem], *, ref: str) -> None:
    if problems:
        raise UserError(f"{ref}: {problems_message(problems)}")


def format_output(rendered: list[Rendered], *, output: str) -> str:
    if output == "json":
        items = [{"manager": r.manager, "object": r.create_manifest()} for r in rendered]
        return orjson.dumps(items, option=orjson.OPT_INDENT_2).decode() + "\n"
    docs = [HEADER + "\n"]
    for r in rendered:
        text = yaml.safe_dump(r.create_manifest(), sort_keys=True, default_flow_style=False)
        docs.append(f"---\n# manager: {r.manager}\n{text}")
    return "".join(docs)
