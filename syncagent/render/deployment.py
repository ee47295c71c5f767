"""The Deployment of a single-node component (docs/rendering.md §3)."""

from __future__ import annotations

from typing import Any

from fieldmanagers import workloads
from syncagent.render import labels as L
from syncagent.render.inputs import ComponentSource, Environment
from syncagent.render.model import Rendered, build
from syncagent.render.podtemplate import pod_template
from syncagent.render.workload_meta import (
    dcd_owner,
    replicas,
    workload_annotations,
    workload_labels,
)

DEFAULT_SURGE = "25%"


def strategy(annotations: dict[str, str]) -> dict[str, Any]:
    """The Deployment strategy from the workload annotations."""
    if annotations.get(L.STRATEGY) == "Recreate":
        return {"type": "Recreate"}
    surge = _int_or_str(annotations.get(L.MAX_SURGE, DEFAULT_SURGE))
    unavailable = _int_or_str(annotations.get(L.MAX_UNAVAILABLE, DEFAULT_SURGE))
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
    }


def _int_or_str(value: str) -> int | str:
    # Digits-only values are counts; anything else (``25%``) stays a string (our design).
    return int(value) if value.isascii() and value.isdigit() else value


def deployment(
    source: ComponentSource, *, env: Environment, legacy_worker: bool = False
) -> Rendered:
    template = pod_template(source, role="main", env=env, legacy_worker=legacy_worker)
    annotations = workload_annotations(source)
    spec: dict[str, Any] = {}
    count = replicas(source, env)
    if count is not None:
        spec["replicas"] = count
    spec |= {
        "selector": {"matchLabels": {L.SELECTOR: source.name}},
        "strategy": strategy(annotations),
        "template": template,
    }
    return build(
        manager=workloads.MANAGER.name,
        api_version="apps/v1",
        kind="Deployment",
        name=source.name,
        namespace=source.namespace,
        labels=workload_labels(source),
        annotations=annotations,
        owner=dcd_owner(source),
        spec=spec,
    )
