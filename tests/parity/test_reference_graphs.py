"""Every upstream example graph and recipe renders on every program it is eligible for, and its
multinode templates carry the launch flags upstream's operator would inject.

Graphs: each file of ``dgd-examples/`` and ``upstream/`` holding a DynamoGraphDeployment
(v1alpha1 ones go through ``syncagent convert`` first). Each is rendered by the CLI, as a user
runs it: ``--program component`` and ``grove`` always, ``disaggregatedset`` when the
graph is eligible by spec/disaggregatedset.md §1 (computed here, not by syncagent); an
ineligible graph must be refused with exit 1. The graph and every rendered object must pass a
server-side dry-run apply on the test control plane. The expected launch text comes from
``launch_oracle`` (upstream's rules, written apart from the renderer).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from syncagent.ssa.api import KubeApi
from tests.parity.support.launch_oracle import (
    LAUNCH_MARKERS,
    Deployer,
    backend_of,
    expected_launch,
    grove_deployer,
    lws_deployer,
)
from tests.parity.support.reference import (
    WORKER_TYPES,
    dry_run_all,
    ds_eligible,
    dump,
    graph_files,
    graph_text,
    in_namespace,
    missing_reference,
    node_count,
    params_or_missing,
    relative_id,
    syncagent,
)

pytestmark = pytest.mark.cluster
PROGRAMS = ("component", "grove", "disaggregatedset")
PASS_ANNOTATIONS = (
    "nvidia.com/vllm-distributed-executor-backend",
    "nvidia.com/dynamo-operator-origin-version",
)


def _params() -> list[Any]:
    files = [] if missing_reference() else graph_files()
    cases = [(f, p) for f in files for p in PROGRAMS]
    return params_or_missing(cases, [f"{relative_id(f)}-{p}" for f, p in cases])


def main_of(pod_spec: Mapping[str, Any]) -> dict[str, Any]:
    return next(c for c in pod_spec.get("containers") or [] if c.get("name") == "main")


def templates(objects: list[dict[str, Any]]) -> Iterator[tuple[str, str, dict, Deployer]]:
    """``(component, role, pod spec, deployer)`` of every leader/worker template rendered."""
    for obj in objects:
        kind, spec = obj.get("kind"), obj.get("spec") or {}
        if kind == "LeaderWorkerSet":
            yield from _lws_templates(spec.get("leaderWorkerTemplate") or {})
        elif kind == "DisaggregatedSet":
            for role in spec.get("roles") or []:
                yield from _lws_templates(
                    (role.get("spec") or {}).get("leaderWorkerTemplate") or {}
                )
        elif kind == "PodCliqueSet":
            for clique in (spec.get("template") or {}).get("cliques") or []:
                name = clique["name"]
                if name.endswith(("-ldr", "-wkr")):
                    component = clique["labels"]["nvidia.com/dynamo-component"]
                    role = "leader" if name.endswith("-ldr") else "worker"
                    yield component, role, clique["spec"]["podSpec"], grove_deployer(component)


def _lws_templates(lwt: Mapping[str, Any]) -> Iterator[tuple[str, str, dict, Deployer]]:
    for role in ("leader", "worker"):
        template = lwt[f"{role}Template"]
        component = template["metadata"]["labels"]["nvidia.com/dynamo-component"]
        yield component, role, template["spec"], lws_deployer()


def component_annotations(graph: Mapping[str, Any], component: Mapping[str, Any]) -> dict:
    """The pod-template annotations upstream's backends read (graph.go): the component's own,
    then the graph's propagated metadata annotations, then its ``spec.annotations`` (lowest)."""
    graph_annotations = (graph.get("metadata") or {}).get("annotations") or {}
    propagated = {k: v for k, v in graph_annotations.items() if k in PASS_ANNOTATIONS}
    pod = ((component.get("podTemplate") or {}).get("metadata") or {}).get("annotations") or {}
    return {**(graph["spec"].get("annotations") or {}), **propagated, **pod}


@pytest.mark.anyio
@pytest.mark.parametrize("case", _params())
async def test_reference_graph_renders_with_launch_flags(
    case: tuple[Path, str] | str, api: KubeApi, clusterenv_namespace: str
) -> None:
    assert isinstance(case, tuple)
    path, program = case
    inputs = in_namespace(list(yaml.safe_load_all(graph_text(path))), clusterenv_namespace)
    (graph,) = inputs
    components = graph["spec"]["components"]
    if program == "disaggregatedset" and not ds_eligible(components):
        proc = syncagent("render", "-f", "-", "--program", program, stdin=dump(inputs))
        assert proc.returncode == 1, proc.stdout[:500]
        assert "cannot render with --program disaggregatedset" in proc.stderr
        return
    # The graph and every object rendered from it are accepted by the real API server (our CRDs,
    # the pinned LWS/DS/Grove CRDs); what the server stores is what is checked below.
    objects = await dry_run_all(api, inputs, "--program", program)
    assert len(objects) > 1, f"{relative_id(path)}: --program {program} rendered nothing"
    by_name = {c["name"]: c for c in components}
    multinode = {name for name, c in by_name.items() if node_count(c) > 1}
    seen: set[tuple[str, str]] = set()
    problems: list[str] = []
    for name, role, pod_spec, deployer in templates(objects):
        seen.add((name, role))
        component = by_name[name]
        main = main_of(component["podTemplate"]["spec"])
        launch = expected_launch(
            backend=backend_of(graph["spec"], component),
            role=role,
            nodes=node_count(component),
            main=main,
            annotations=component_annotations(graph, component),
            deployer=deployer,
        )
        rendered = main_of(pod_spec)
        line = " ".join([*(rendered.get("command") or []), *(rendered.get("args") or [])])
        where = f"{relative_id(path)} --program {program}: {name} {role}"
        problems += [f"{where} lacks {f!r}" for f in launch.fragments if f not in line]
        if not launch.injects:
            problems += [
                f"{where} has {m!r}, upstream injects nothing" for m in LAUNCH_MARKERS if m in line
            ]
    expected_roles = {(n, r) for n in multinode for r in ("leader", "worker")}
    if program == "disaggregatedset":
        expected_roles = {
            (n, r) for n, r in expected_roles if by_name[n].get("type") in WORKER_TYPES
        }
    assert seen >= expected_roles, f"templates missing: {sorted(expected_roles - seen)}"
    assert not problems, "\n".join(problems)
