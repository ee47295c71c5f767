"""The differential tier's cases: each graph on every pathway it can be compared on, and taken
over from upstream's operator (no tests here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from tests.parity.support.diff_configs import DEFAULT
from tests.parity.support.diff_run import TAKEOVER, DiffCase
from tests.parity.support.differential import Pathway
from tests.parity.support.reference import ds_eligible, graph_files, graph_text, relative_id

ENABLE_GROVE = "nvidia.com/enable-grove"


def pathways(graph: dict[str, Any]) -> list[Pathway]:
    """Where a graph can be compared. Grove: unless the graph opts out (upstream then renders
    Component objects whatever its gate says). DisaggregatedSet: when eligible."""
    out = [Pathway.COMPONENT]
    annotations = graph.get("metadata", {}).get("annotations") or {}
    if str(annotations.get(ENABLE_GROVE, "")).lower() != "false":
        out.append(Pathway.GROVE)
    if ds_eligible(graph["spec"].get("components") or []):
        out.append(Pathway.DISAGGREGATEDSET)
    return out


def cases_for(
    source: str,
    docs: Sequence[dict[str, Any]],
    namespace: str,
    backend: str = "",
    *,
    config: str = DEFAULT,
) -> list[DiffCase]:
    """The graph's cases; under a configuration other than the default, its name leads the
    source (``diff/<group>/<config>/<source>``), so docs/parity.md's ``diff/<group>/*`` still
    select them."""
    source = f"{config}/{source}" if config else source
    graph = next(d for d in docs if d.get("kind") == "DynamoGraphDeployment")
    cases = [
        DiffCase(
            f"diff/{p.value}/{source}", p, docs, namespace, discovery_backend=backend, config=config
        )
        for p in pathways(graph)
    ]
    # The same graph taken over from upstream's operator: rendered with the worker hash that
    # operator recorded on it, compared without D1/D2 (the names and worker-hash fields match).
    takeover = DiffCase(
        f"diff/{TAKEOVER}/{source}",
        Pathway.COMPONENT,
        docs,
        namespace,
        discovery_backend=backend,
        takeover=True,
        config=config,
    )
    return [*cases, takeover]


def reference_cases(config: str = DEFAULT) -> list[DiffCase]:
    cases = []
    for index, path in enumerate(graph_files()):
        docs = [d for d in yaml.safe_load_all(graph_text(path)) if isinstance(d, dict)]
        source = f"reference/{relative_id(path)}"
        cases += cases_for(source, docs, f"ref-{index}", config=config)
    return cases
