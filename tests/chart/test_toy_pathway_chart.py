"""A fourth pathway reaches the chart's RBAC through the generator alone (issue 28 item 1): the
chart regenerated over the registry plus the toy pathway grants its kind, and nothing else of
the chart changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from syncagent.cli import generate
from syncagent.cli.pathways import PROGRAMS
from tests.chart.support.render import (
    CHART,
    KUBE_VERSION,
    RELEASE,
    RELEASE_NS,
    cluster_wide_rules,
    run_helm,
)
from tests.support.toypathway import TOY
from tests.support.toypathway.agent import PROGRAMS as WITH_TOY

SA = "r1-syncagent"
WRITE = ("get", "list", "watch", "create", "patch", "delete")


def regenerated_chart(tmp_path: Path) -> Path:
    """A copy of the chart whose generated files are made from the registry with the toy."""
    chart = tmp_path / "syncagent"
    shutil.copytree(CHART, chart)
    for path, text in generate.generated(WITH_TOY).items():
        if path.is_relative_to(Path("helm/syncagent")):
            (chart / path.relative_to("helm/syncagent")).write_text(text, encoding="utf-8")
    return chart


def template(chart: Path) -> list[dict]:
    args = ("template", RELEASE, str(chart), "--namespace", RELEASE_NS)
    result = run_helm(*args, "--kube-version", KUBE_VERSION)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_the_regenerated_chart_grants_the_toy_pathways_kind(tmp_path: Path) -> None:
    with_toy = cluster_wide_rules(template(regenerated_chart(tmp_path)), subject=SA)
    for verb in WRITE:
        assert with_toy.allows(TOY.group, TOY.plural, verb), verb
    shipped = cluster_wide_rules(template(CHART), subject=SA)
    assert not shipped.allows(TOY.group, TOY.plural, "list")
    # the built-in pathways' rights are the same in both
    for (group, resource), verbs in PROGRAMS.rbac().items():
        for verb in verbs:
            assert with_toy.allows(group, resource, verb) == shipped.allows(group, resource, verb)


def test_the_toy_pathway_is_in_the_regenerated_crd_enum(tmp_path: Path) -> None:
    crd = regenerated_chart(tmp_path) / "files/crds/nvidia.com_dynamographdeployments.yaml"
    doc = yaml.safe_load(crd.read_text())
    (served,) = [v for v in doc["spec"]["versions"] if v["served"]]
    routing = served["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["routing"]
    assert routing["properties"]["pathway"]["enum"] == ["Toy", *PROGRAMS.pathways]
