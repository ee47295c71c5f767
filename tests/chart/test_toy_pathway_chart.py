"""A fourth pathway reaches the chart through the generator alone (issue 28 item 1): the chart
regenerated over the registry plus the toy pathway grants its kind, lists it in the CRD enum and
takes its capability from values, and nothing else of the chart changes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
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


@pytest.fixture(scope="module")
def regenerated_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the chart whose generated files are made from the registry with the toy (the
    tests only read it)."""
    chart = tmp_path_factory.mktemp("toy-chart") / "syncagent"
    shutil.copytree(CHART, chart)
    for path, text in generate.generated(WITH_TOY).items():
        if path.is_relative_to(Path("helm/syncagent")):
            (chart / path.relative_to("helm/syncagent")).write_text(text, encoding="utf-8")
    return chart


def helm_template(chart: Path, *sets: str) -> subprocess.CompletedProcess[str]:
    """``helm template`` of ``chart`` with these ``--set`` values."""
    args = ("template", RELEASE, str(chart), "--namespace", RELEASE_NS)
    return run_helm(*args, "--kube-version", KUBE_VERSION, *(f"--set={s}" for s in sets))


def template(chart: Path, *sets: str) -> list[dict]:
    result = helm_template(chart, *sets)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_the_regenerated_chart_grants_the_toy_pathways_kind(regenerated_chart: Path) -> None:
    with_toy = cluster_wide_rules(template(regenerated_chart), subject=SA)
    for verb in WRITE:
        assert with_toy.allows(TOY.group, TOY.plural, verb), verb
    shipped = cluster_wide_rules(template(CHART), subject=SA)
    assert not shipped.allows(TOY.group, TOY.plural, "list")
    # the built-in pathways' rights are the same in both
    for (group, resource), verbs in PROGRAMS.rbac().items():
        for verb in verbs:
            assert with_toy.allows(group, resource, verb) == shipped.allows(group, resource, verb)


def test_the_toy_pathway_is_in_the_regenerated_crd_enum(regenerated_chart: Path) -> None:
    crd = regenerated_chart / "files/crds/nvidia.com_dynamographdeployments.yaml"
    doc = yaml.safe_load(crd.read_text())
    (served,) = [v for v in doc["spec"]["versions"] if v["served"]]
    routing = served["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["routing"]
    assert routing["properties"]["pathway"]["enum"] == ["Toy", *PROGRAMS.pathways]


def capability_flags(chart: Path, *sets: str) -> list[str]:
    """The agent's ``--capability`` values in the chart rendered with these values."""
    (deployment,) = [d for d in template(chart, *sets) if d["kind"] == "Deployment"]
    (agent,) = deployment["spec"]["template"]["spec"]["containers"]
    return [a.removeprefix("--capability=") for a in agent["args"] if "--capability=" in a]


def test_the_toy_pathways_capability_is_set_through_the_regenerated_charts_values(
    regenerated_chart: Path,
) -> None:
    # left out of values.yaml (nobody edited it): discovery decides, in the registry's order
    assert capability_flags(regenerated_chart) == [
        f"{c.name}=auto" for c in WITH_TOY.capabilities()
    ]
    given = {"toy": "false", "lws": "true"}
    sets = [f"capabilities.{name}={value}" for name, value in given.items()]
    assert capability_flags(regenerated_chart, *sets) == [
        f"{c.name}={given.get(c.name, 'auto')}" for c in WITH_TOY.capabilities()
    ]
    # the shipped chart's schema rejects a capability no shipped pathway declares, naming it
    rejected = helm_template(CHART, "capabilities.toy=false")
    assert rejected.returncode != 0
    assert "additional properties 'toy' not allowed" in rejected.stderr
