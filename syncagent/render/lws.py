"""The LeaderWorkerSet of a multinode component (docs/rendering.md §3).

:func:`leader_worker_templates` is the one source of leader/worker pod templates: the
DisaggregatedSet pathway renders its roles with it, so both paths give identical pods.
"""

from __future__ import annotations

from typing import Any

from fieldmanagers import workloads
from syncagent.render.inputs import ComponentSource, Environment
from syncagent.render.model import Rendered, build
from syncagent.render.naming import lws_name
from syncagent.render.podtemplate import pod_template
from syncagent.render.workload_meta import (
    dcd_owner,
    replicas,
    workload_labels,
)

API_VERSION = "leaderworkerset.x-k8s.io/v1"
KIND = "LeaderWorkerSet"


def rollout_strategy() -> dict[str, Any]:
    """Explicit, equal to the LWS webhook defaults: the controller dereferences it unchecked."""
    return {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1, "partition": 0},
    }


def network_config() -> dict[str, Any]:
    return {"subdomainPolicy": "Shared"}


def leader_worker_templates(
    source: ComponentSource,
    *,
    env: Environment,
    legacy_worker: bool = False,
    grove: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(leaderTemplate, workerTemplate)`` of a multinode component; raises RenderError."""
    common = {"env": env, "legacy_worker": legacy_worker, "grove": grove}
    return (
        pod_template(source, role="leader", **common),
        pod_template(source, role="worker", **common),
    )


def leader_worker_set(
    source: ComponentSource, *, env: Environment, legacy_worker: bool = False, grove: bool = False
) -> Rendered:
    """The LeaderWorkerSet; ``grove`` renders Grove's pods (only Grove's Services use it)."""
    leader, worker = leader_worker_templates(
        source, env=env, legacy_worker=legacy_worker, grove=grove
    )
    count = replicas(source, env)
    spec = {
        "replicas": 1 if count is None else count,
        "startupPolicy": "LeaderCreated",
        "rolloutStrategy": rollout_strategy(),
        "networkConfig": network_config(),
        "leaderWorkerTemplate": {
            "size": source.node_count,
            "restartPolicy": "RecreateGroupOnPodRestart",
            "leaderTemplate": leader,
            "workerTemplate": worker,
        },
    }
    return build(
        manager=workloads.MANAGER.name,
        api_version=API_VERSION,
        kind=KIND,
        name=lws_name(source.name),
        namespace=source.namespace,
        # No annotations: upstream's LeaderWorkerSet has none (generateLeaderWorkerSet), and
        # the pods get theirs from the templates.
        labels=workload_labels(source),
        owner=dcd_owner(source),
        spec=spec,
    )
