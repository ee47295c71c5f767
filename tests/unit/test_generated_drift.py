"""Every generated file is exactly what ``python -m syncagent.cli.generate`` makes from the
models and the pathways (crds/, the chart's copy of them, the chart's pathway RBAC rules); the
vendored Kubernetes schemas are refreshed by the same command with ``--openapi "$(python -m
syncagent.devcluster.gomod)"`` (that check downloads a Go module, so it lives in the cluster
tier: test_crds_vendored_schemas.py)."""

from __future__ import annotations

import yaml

from syncagent.api import crdgen
from syncagent.cli import generate
from syncagent.cli.pathways import PROGRAMS

RUN = "run: python -m syncagent.cli.generate"


def test_every_generated_file_matches_the_generator() -> None:
    for path, text in generate.generated(PROGRAMS).items():
        where = generate.REPO / path
        assert where.is_file(), f"{path} is missing; {RUN}"
        assert where.read_text(encoding="utf-8") == text, f"{path} drifted; {RUN}"


def test_no_stale_crd_file_is_left() -> None:
    expected = {p.name for p in generate.generated(PROGRAMS) if p.parent == generate.CRDS}
    for folder in (generate.CRDS, generate.CHART_CRDS):
        actual = {p.name for p in (generate.REPO / folder).glob("*.yaml")}
        assert actual == expected, f"{folder}: {RUN}"


def test_the_pathway_enum_is_the_registry_in_precedence_order() -> None:
    crd = crdgen.graph_crd(pathways=PROGRAMS.pathways)
    (served,) = [v for v in crd["spec"]["versions"] if v["served"]]
    routing = served["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["routing"]
    assert routing["properties"]["pathway"]["enum"] == ["Grove", "DisaggregatedSet", "Component"]


def test_the_pathway_rules_template_lists_each_pathways_own_rules() -> None:
    text = generate.pathway_rules_template(PROGRAMS)
    body = text.split('{{- define "syncagent.pathwayRules" -}}\n')[1].split("{{- end }}")[0]
    rules = {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in yaml.safe_load(body)}
    assert rules[("grove.io", "podcliques/scale")] == ["patch"]
    assert rules[("disaggregatedset.x-k8s.io", "disaggregatedsets")][-1] == "delete"
    # the common watches' kinds are the chart's own rules, never repeated here
    assert ("apps", "deployments") not in rules
