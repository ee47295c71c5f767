"""crds/ must be exactly what the generator makes from the models (regenerate:
``python -m syncagent.api.crdgen``; the vendored Kubernetes schemas with
``python -m syncagent.api.crdgen --openapi "$(python -m syncagent.devcluster.gomod)"``; that
check downloads a Go module, so it lives in the cluster tier: test_crds_vendored_schemas.py)."""

from __future__ import annotations

from pathlib import Path

from syncagent.api import crdgen

CRDS = Path(__file__).resolve().parents[2] / "crds"


def test_crds_folder_matches_the_generator() -> None:
    expected = crdgen.rendered_files()
    actual = {p.name: p.read_text(encoding="utf-8") for p in CRDS.glob("*.yaml")}
    assert sorted(actual) == sorted(expected), "run: python -m syncagent.api.crdgen"
    for name, text in expected.items():
        assert actual[name] == text, f"crds/{name} drifted; run: python -m syncagent.api.crdgen"
