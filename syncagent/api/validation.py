"""The rules the agent enforces itself (docs/api.md §1), as structured problems.

Some rules are also enforced by the API server through our CRD (V1-V4, V6, V7, V9, V11); the
agent checks them too so offline commands and status messages agree. A problem's ``str()`` is
``<json path>: <message>``; ``problems_message`` joins them with ``"; "`` (the status message);
``Problem.full()`` prefixes ``Kind/namespace/name``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from syncagent.api.component import (
    MAIN_CONTAINER,
    NAME_PATTERN,
    QUANTITY_PATTERN,
    ComponentFields,
    DynamoComponentDeployment,
)
from syncagent.api.graph import MAX_COMPONENTS, DynamoGraphDeployment
from syncagent.api.workerhash import active_worker_hash, worker_suffix

GLOBAL_DYNAMO_NAMESPACE = "dynamo"
MAX_LABEL_LENGTH = 63
MAX_LWS_NAME_PLUS_GROUP = 41  # "<name>-0": the worker StatefulSet revision label must fit 63

_NAME_RE = re.compile(NAME_PATTERN)
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)
_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class Problem:
    """One broken rule: which object, which field (JSON path), which rule, and why."""

    object_ref: str
    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def full(self) -> str:
        return f"{self.object_ref}: {self}"


def problems_message(problems: Collection[Problem]) -> str:
    """The status message of a failed validation: every problem, joined with ``"; "``."""
    return "; ".join(str(p) for p in problems)


def normalize_name(name: str) -> str:
    """Child object names: lowercase, ``.`` -> ``-``."""
    return name.lower().replace(".", "-")


def component_resource_name(graph_name: str, component_name: str, *, suffix: str = "") -> str:
    """``normalize(<dgd>-<lower(component)>)``: the DCD / workload / Service name, plus
    ``-<suffix>`` for a worker named with a recorded worker hash (docs/parity.md D1)."""
    base = normalize_name(f"{graph_name}-{component_name.lower()}")
    return f"{base}-{suffix}" if suffix else base


def dynamo_namespace(graph_name: str, namespace: str, *, global_namespace: bool = False) -> str:
    """``dynamo`` when global, else ``<namespace>-<graph name with '.' -> '-'>``."""
    if global_namespace:
        return GLOBAL_DYNAMO_NAMESPACE
    return f"{namespace}-{graph_name.replace('.', '-')}"


def validate_graph(
    graph: DynamoGraphDeployment,
    *,
    namespace: str | None = None,
    dcd_components: Collection[str] | None = None,
) -> list[Problem]:
    """Every §1.4 problem of a DGD, in a stable order (graph rules, components, restart).

    ``namespace`` defaults to ``metadata.namespace`` (else ``default``). ``dcd_components`` names
    the components rendered as DCDs (V16 applies to their multinode LeaderWorkerSets); None means
    all of them (the Component pathway); the Grove pathway passes an empty collection.
    """
    ns = namespace or graph.metadata.namespace or "default"
    ref = f"{graph.kind}/{ns}/{graph.name}"
    found = [Problem(ref, path, rule, msg) for path, rule, msg in _graph_rules(graph)]
    # Only the Component pathway (every component a DCD) names workers with the graph's
    # recorded worker hash; its names are the ones checked.
    worker_hash = active_worker_hash(graph.metadata.annotations) if dcd_components is None else ""
    for i, comp in enumerate(graph.spec.components):
        as_dcd = dcd_components is None or comp.name in dcd_components
        at = f"spec.components[{i}]"
        suffix = worker_suffix(comp.type, worker_hash)
        checks = _component_rules(comp, at)
        checks = [*checks, *_naming_rules(comp, at, graph.name, ns, as_dcd, suffix=suffix)]
        found.extend(Problem(ref, path, rule, msg) for path, rule, msg in checks)
    found.extend(Problem(ref, path, rule, msg) for path, rule, msg in _restart_rules(graph))
    return _with_name_length_rule(found, graph, ns, ref=ref)


def _with_name_length_rule(
    found: list[Problem], graph: DynamoGraphDeployment, namespace: str, *, ref: str
) -> list[Problem]:
    """One ``metadata.name`` problem when only a shorter graph name can fix V14 (docs/bad-input.md).

    A graph name too long for any generated name (``<name>-<component>`` needs two more
    characters) breaks every component's names and Dynamo namespace; listing each of them (V14,
    V17) buries the one fix in hundreds of characters.
    """
    if len(graph.name) <= MAX_LABEL_LENGTH - len("-x"):
        return found
    comps = [c for c in graph.spec.components if c.name and _valid_name(c.name)]
    limit = min((MAX_LABEL_LENGTH - len(f"-{c.name}") for c in comps), default=MAX_LABEL_LENGTH - 2)
    if any(not c.global_dynamo_namespace for c in comps):
        limit = min(limit, MAX_LABEL_LENGTH - len(f"{namespace}-"))
    kept = [p for p in found if p.rule != "V17" and not (p.rule == "V14" and _too_long(p))]
    message = (
        f"{len(graph.name)} characters is too long for the names generated from it (at most "
        f"{MAX_LABEL_LENGTH}); shorten metadata.name to at most {max(limit, 1)} characters"
    )
    return [Problem(ref, "metadata.name", "V14", message), *kept]


def _too_long(problem: Problem) -> bool:
    name = problem.message.split('"')[1] if problem.message.count('"') >= 2 else ""
    return len(name) > MAX_LABEL_LENGTH


def validate_component_deployment(
    dcd: DynamoComponentDeployment, *, namespace: str | None = None
) -> list[Problem]:
    """The per-component rules on a DCD ``spec`` (paths start with ``spec.``)."""
    ns = namespace or dcd.metadata.namespace or "default"
    ref = f"{dcd.kind}/{ns}/{dcd.metadata.name or ''}"
    checks = list(_component_rules(dcd.spec, "spec"))
    checks.extend(_dcd_naming_rules(dcd, ns))
    return [Problem(ref, path, rule, msg) for path, rule, msg in checks]


_Check = tuple[str, str, str]  # (path, rule, message)


def _graph_rules(graph: DynamoGraphDeployment) -> Iterator[_Check]:
    comps = graph.spec.components
    if not comps:
        yield "spec.components", "V18", "at least one component is required"
    if len(comps) > MAX_COMPONENTS:
        yield "spec.components", "V1", f"at most {MAX_COMPONENTS} components are allowed"
    lowered = Counter(c.name.lower() for c in comps)
    if any(n > 1 for n in lowered.values()):
        yield "spec.components", "V3", "component names must be unique case-insensitively"
    if sum(1 for c in comps if c.type == "epp") > 1:
        yield "spec.components", "V4", "at most one component may have type epp"


def _component_rules(comp: ComponentFields, at: str) -> Iterator[_Check]:
    if comp.name is not None and not _valid_name(comp.name):
        yield (
            f"{at}.name",
            "V2",
            f"must be 1-63 characters matching {NAME_PATTERN}",
        )
    yield from _container_rules(comp, at)
    if comp.replicas is not None and comp.replicas < 0:
        yield f"{at}.replicas", "V7", "must be >= 0"
    if comp.multinode is not None and comp.multinode.node_count < 2:
        yield f"{at}.multinode.nodeCount", "V7", "must be >= 2"
    if comp.shared_memory_size is not None and not _non_negative_quantity(comp.shared_memory_size):
        yield f"{at}.sharedMemorySize", "V8", "must be a non-negative quantity"
    if comp.model_ref is not None and not comp.model_ref.name:
        yield f"{at}.modelRef.name", "V9", "required"
    yield from _checkpoint_rules(comp, at)


def _container_rules(comp: ComponentFields, at: str) -> Iterator[_Check]:
    main = comp.main_container()
    if main is None or not main.get("image"):
        yield (
            f"{at}.podTemplate",
            "V5",
            f'a container named "{MAIN_CONTAINER}" with a non-empty image is required',
        )
    for j, container in enumerate(comp.containers()):
        name = container.get("name")
        if name != MAIN_CONTAINER and not container.get("image"):
            yield (
                f"{at}.podTemplate.spec.containers[{j}].image",
                "V6",
                f'required for container "{name}"',
            )


def _checkpoint_rules(comp: ComponentFields, at: str) -> Iterator[_Check]:
    ckpt = comp.checkpoint
    if ckpt is None:
        return
    if ckpt.enabled and not ckpt.checkpoint_ref:
        yield (
            f"{at}.experimental.checkpoint.checkpointRef",
            "V10",
            "required when checkpoint is enabled; automatic checkpoint creation is not supported",
        )
    if ckpt.job is not None and ckpt.checkpoint_ref:
        yield (
            f"{at}.experimental.checkpoint",
            "V11",
            "checkpoint.job cannot be set when checkpointRef is specified",
        )


def _naming_rules(
    comp: ComponentFields,
    at: str,
    graph_name: str,
    namespace: str,
    as_dcd: bool,
    *,
    suffix: str = "",
) -> Iterator[_Check]:
    if comp.name is None or not _valid_name(comp.name):
        return
    generated = component_resource_name(graph_name, comp.name, suffix=suffix)
    if len(generated) > MAX_LABEL_LENGTH or not _DNS1035_RE.match(generated):
        yield (
            at,
            "V14",
            f'generated resource name "{generated}" must be a DNS-1035 label of at most '
            f"{MAX_LABEL_LENGTH} characters",
        )
    if comp.is_multinode and "." in graph_name:
        yield (
            f"{at}.multinode",
            "V15",
            'the DynamoGraphDeployment name must not contain "."',
        )
    if comp.is_multinode and as_dcd:
        yield from _lws_name_rule(f"{generated}-0", at)
    yield from _dynamo_namespace_rule(comp, at, graph_name, namespace)


def _dcd_naming_rules(dcd: DynamoComponentDeployment, namespace: str) -> Iterator[_Check]:
    if dcd.spec.is_multinode and dcd.metadata.name:
        yield from _lws_name_rule(f"{dcd.metadata.name}-0", "spec")
    yield from _dynamo_namespace_rule(dcd.spec, "spec", dcd.parent_graph_name, namespace)


def _lws_name_rule(lws_group_name: str, at: str) -> Iterator[_Check]:
    if len(lws_group_name) > MAX_LWS_NAME_PLUS_GROUP:
        yield (
            f"{at}.multinode",
            "V16",
            f'LeaderWorkerSet name "{lws_group_name}" must be at most '
            f"{MAX_LWS_NAME_PLUS_GROUP} characters",
        )


def _dynamo_namespace_rule(
    comp: ComponentFields, at: str, graph_name: str, namespace: str
) -> Iterator[_Check]:
    dyn_ns = dynamo_namespace(
        graph_name, namespace, global_namespace=bool(comp.global_dynamo_namespace)
    )
    if len(dyn_ns) > MAX_LABEL_LENGTH:
        yield (
            at,
            "V17",
            f'Dynamo namespace "{dyn_ns}" must be at most {MAX_LABEL_LENGTH} characters',
        )


def _restart_rules(graph: DynamoGraphDeployment) -> Iterator[_Check]:
    restart = graph.spec.restart
    if restart is None or restart.strategy is None or not restart.strategy.order:
        return
    order = restart.strategy.order
    if restart.strategy.type == "Parallel":
        yield "spec.restart.strategy.order", "V12", "must not be set for Parallel restarts"
        return
    names = sorted(c.name for c in graph.spec.components)
    if sorted(order) != names:
        yield (
            "spec.restart.strategy.order",
            "V13",
            "must list every component name exactly once",
        )


def _valid_name(name: str) -> bool:
    return 1 <= len(name) <= MAX_LABEL_LENGTH and bool(_NAME_RE.match(name))


def _non_negative_quantity(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return value >= 0
    text = str(value)
    if not _QUANTITY_RE.match(text):
        return False
    if text.startswith("-"):
        # "-0" is zero, not negative.
        return not any(ch in "123456789" for ch in re.split(r"[eE]|[KMGTPE]i?|[numk]", text)[0])
    return True
