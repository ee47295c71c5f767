"""crds/ must be exactly what the generator makes from the models (regenerate:
``python -m syncagent.api.crdgen``; the vendored Kubernetes schemas with
``python -m syncagent.api.crdgen --openapi "$(python -m syncagent.devcluster.gomod)"``)."""

from __future__ import annotations

from pathlib import Path

from syncagent.api import crdgen, kubeschema
from syncagent.devcluster.gomod import kubernetes_openapi

CRDS = Path(__file__).resolve().parents[2] / "crds"


def test_crds_folder_matches_the_generator() -> None:
    expected = crdgen.rendered_files()
    actual = {p.name: p.read_text(encoding="utf-8") for p in CRDS.glob("*.yaml")}
    assert sorted(actual) == sorted(expected), "run: python -m syncagent.api.crdgen"
    for name, text in expected.items():
        assert actual[name] == text, f"crds/{name} drifted; run: python -m syncagent.api.crdgen"


def test_vendored_kubernetes_schemas_match_the_pinned_openapi_document() -> None:
    # Downloads k8s.io/kubernetes at the pinned version through the Go module proxy (cached).
    expected = kubeschema.vendored_text(path=kubernetes_openapi())
    actual = kubeschema.VENDORED.read_text(encoding="utf-8")
    assert actual == expected, (
        'run: python -m syncagent.api.crdgen --openapi "$(python -m syncagent.devcluster.gomod)"'
    )
