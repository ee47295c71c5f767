"""The chart's CRDs are the repository's crds/, unchanged but for Helm's labels and the keep
annotation (refresh both: ``python -m syncagent.cli.generate``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.chart.support.render import CHART, REPO, objects, render

SOURCE = REPO / "crds"
COPY = CHART / "files" / "crds"
KEEP = "helm.sh/resource-policy"
REFRESH = "python -m syncagent.cli.generate"


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.yaml"))}


def _source_crds() -> dict[str, dict[str, Any]]:
    docs = [yaml.safe_load(text) for text in _files(SOURCE).values()]
    return {d["metadata"]["name"]: d for d in docs}


def test_chart_copy_is_byte_for_byte_the_repository_crds() -> None:
    source, copy = _files(SOURCE), _files(COPY)
    assert source, "crds/ is empty"
    assert sorted(copy) == sorted(source), f"chart CRD files differ; run: {REFRESH}"
    for name, text in source.items():
        assert copy[name] == text, f"helm/syncagent/files/crds/{name} drifted; run: {REFRESH}"


def test_rendered_crds_equal_the_repository_crds() -> None:
    rendered = {d["metadata"]["name"]: d for d in objects(render(), "CustomResourceDefinition")}
    expected = _source_crds()
    assert sorted(rendered) == sorted(expected)
    for name, crd in rendered.items():
        meta = crd["metadata"]
        want = expected[name]
        assert meta.pop("annotations") == {**want["metadata"].get("annotations", {}), KEEP: "keep"}
        labels = meta.pop("labels")
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert want["metadata"].get("labels", {}).items() <= labels.items()
        # Everything else survives the template's YAML round trip exactly.
        want_meta = {
            k: v for k, v in want["metadata"].items() if k not in {"labels", "annotations"}
        }
        assert meta == want_meta, name
        assert {k: v for k, v in crd.items() if k != "metadata"} == {
            k: v for k, v in want.items() if k != "metadata"
        }, f"{name}: rendered CRD differs from the one in crds/"


def test_crds_can_be_left_out() -> None:
    assert objects(render({"crds": {"install": False}}), "CustomResourceDefinition") == []


def test_uninstall_keeps_crds_unless_asked_not_to() -> None:
    for crd in objects(render(), "CustomResourceDefinition"):
        assert crd["metadata"]["annotations"][KEEP] == "keep"
    for crd in objects(render({"crds": {"keep": False}}), "CustomResourceDefinition"):
        assert KEEP not in crd["metadata"].get("annotations", {})
