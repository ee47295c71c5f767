"""The vendored Kubernetes schemas (``syncagent/api/kubeschemas.json``) match the pinned
Kubernetes OpenAPI document. In the cluster tier because it downloads ``k8s.io/kubernetes``
through the Go module proxy: unit tests need no Go (tests/policy/test_ci_integrity.py)."""

from __future__ import annotations

from syncagent.api import kubeschema
from syncagent.devcluster.gomod import kubernetes_openapi


def test_vendored_kubernetes_schemas_match_the_pinned_openapi_document() -> None:
    expected = kubeschema.vendored_text(path=kubernetes_openapi())
    actual = kubeschema.VENDORED.read_text(encoding="utf-8")
    assert actual == expected, (
        'run: python -m syncagent.cli.generate --openapi "$(python -m syncagent.devcluster.gomod)"'
    )
