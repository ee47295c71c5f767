"""Every generated file is exactly what ``python -m syncagent.cli.generate`` makes from the
models and the pathways (crds/, the chart's copy of them, the chart's pathway RBAC rules, its
agent guard's data, its capabilities and the capability list of its values schema); the
vendored Kubernetes schemas are refreshed by the same command with ``--openapi "$(python -m
syncagent.devcluster.gomod)"`` (that check downloads a Go module, so it lives in the cluster
tier: test_crds_vendored_schemas.py).

The expected lists are the registry's (``cli.pathways``), never written out here: a new pathway
needs no edit of this file. A registry with the toy pathway shows each check fails when the
checked-in files miss a pathway."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from syncagent.cli import generate
from syncagent.cli.pathways import PROGRAMS
from syncagent.programs.registry import Registry
from tests.support.toypathway.agent import PROGRAMS as WITH_TOY

RUN = "run: python -m syncagent.cli.generate"
GRAPH_CRD = generate.CRDS / "nvidia.com_dynamographdeployments.yaml"


def checked_in(path: Path) -> str:
    return (generate.REPO / path).read_text(encoding="utf-8")


def drifted(programs: Registry) -> set[Path]:
    """The generated files whose checked-in text is not what ``programs`` makes."""
    out = set()
    for path, text in generate.generated(programs).items():
        where = generate.REPO / path
        if not where.is_file() or where.read_text(encoding="utf-8") != text:
            out.add(path)
    return out


def pathway_enum() -> list[str]:
    """The checked-in graph CRD's ``status.routing.pathway`` enum."""
    crd = yaml.safe_load(checked_in(GRAPH_CRD))
    (served,) = [v for v in crd["spec"]["versions"] if v["served"]]
    routing = served["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["routing"]
    return routing["properties"]["pathway"]["enum"]


def schema_capabilities() -> list[str]:
    """The capability names the checked-in values schema accepts."""
    schema = json.loads(checked_in(generate.VALUES_SCHEMA))
    return list(schema["properties"]["capabilities"]["properties"])


def template_capabilities() -> list[dict[str, object]]:
    """The checked-in ``syncagent.capabilities`` template's JSON list."""
    text = checked_in(generate.CAPABILITIES)
    body = text.split('{{- define "syncagent.capabilities" -}}\n')[1].split("{{- end }}")[0]
    return json.loads(body)


def test_every_generated_file_matches_the_generator() -> None:
    assert drifted(PROGRAMS) == set(), RUN


def test_a_pathway_the_files_miss_is_drift_in_each_file_it_reaches() -> None:
    # a registry with one more pathway: its enum value, RBAC rules and capability are missing
    graph_crds = {GRAPH_CRD, generate.CHART_CRDS / GRAPH_CRD.name}
    chart = {generate.PATHWAY_RULES, generate.CAPABILITIES, generate.VALUES_SCHEMA}
    # the agent guard lets the agent write the toy's kind, as the RBAC rules grant it
    chart.add(generate.AGENT_GUARD)
    assert drifted(WITH_TOY) == graph_crds | chart


def test_no_stale_crd_file_is_left() -> None:
    expected = {p.name for p in generate.generated(PROGRAMS) if p.parent == generate.CRDS}
    for folder in (generate.CRDS, generate.CHART_CRDS):
        actual = {p.name for p in (generate.REPO / folder).glob("*.yaml")}
        assert actual == expected, f"{folder}: {RUN}"


def test_the_pathway_enum_is_the_registry_in_precedence_order() -> None:
    assert pathway_enum() == list(PROGRAMS.pathways), RUN
    # the same comparison fails for a registry with a pathway the checked-in CRD lacks
    assert pathway_enum() != list(WITH_TOY.pathways)
    assert set(WITH_TOY.pathways) - set(pathway_enum()) == {"Toy"}


def test_the_chart_names_each_declared_capability_with_what_it_needs() -> None:
    declared = PROGRAMS.capabilities()
    assert schema_capabilities() == [c.name for c in declared], RUN
    assert template_capabilities() == [
        {"name": c.name, "needs": [n.name for n in c.needs]} for c in declared
    ], RUN
    # the same comparison fails for a registry with a capability the chart lacks
    assert {c.name for c in WITH_TOY.capabilities()} - set(schema_capabilities()) == {"toy"}


def test_only_the_schemas_capabilities_are_generated() -> None:
    schema = json.loads(checked_in(generate.VALUES_SCHEMA))
    with_toy = json.loads(generate.values_schema(WITH_TOY, checked_in(generate.VALUES_SCHEMA)))
    assert "toy" in with_toy["properties"]["capabilities"]["properties"]
    del schema["properties"]["capabilities"], with_toy["properties"]["capabilities"]
    assert with_toy == schema


def test_the_pathway_rules_template_lists_each_pathways_own_rules() -> None:
    text = generate.pathway_rules_template(PROGRAMS)
    body = text.split('{{- define "syncagent.pathwayRules" -}}\n')[1].split("{{- end }}")[0]
    rules = {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in yaml.safe_load(body)}
    assert rules[("grove.io", "podcliques/scale")] == ["patch"]
    assert rules[("disaggregatedset.x-k8s.io", "disaggregatedsets")][-1] == "delete"
    # the common watches' kinds are the chart's own rules, never repeated here
    assert ("apps", "deployments") not in rules
