"""Every object rendered from the shipped examples is accepted by the real API server.

For both pinned LWS versions: a server-side dry-run create of each object as the Component
program creates it (content plus controller reference), a dry-run server-side apply under the
object's field manager (SSA also rejects duplicate list-map keys), and convergence: after a real
apply, a dry-run apply of the same intent changes nothing (rendering.md §3: no LWS webhook is
needed for that, because rolloutStrategy and networkConfig are explicit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lightkube import Client, codecs
from lightkube.generic_resource import create_namespaced_resource

from syncagent.api import load_objects
from syncagent.cli.pathways import PROGRAMS
from syncagent.cli.render.offline import render_object
from syncagent.devcluster import ControlPlane
from syncagent.programs import capabilities
from syncagent.render import Rendered

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
LWS_VERSIONS = ("v0.9.0", "v0.10.0")

# Registers the kinds with lightkube's codec so codecs.from_dict can build them.
create_namespaced_resource(
    "nvidia.com", "v1beta1", "DynamoComponentDeployment", "dynamocomponentdeployments"
)
create_namespaced_resource("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets")


def rendered(example: Path, namespace: str) -> list[Rendered]:
    out: list[Rendered] = []
    for obj in load_objects(example.read_text(), source=str(example)):
        obj.metadata.namespace = namespace
        out += render_object(
            obj, caps=capabilities.offline({}, declared=PROGRAMS.capabilities()), programs=PROGRAMS
        )
    return out


def cases() -> list[Any]:
    return [
        pytest.param(example, marks=pytest.mark.lws(version), id=f"{example.stem}-{version}")
        for version in LWS_VERSIONS
        for example in EXAMPLES
    ]


def server_view(obj: Any) -> dict[str, Any]:
    data = obj.to_dict() if hasattr(obj, "to_dict") else dict(obj)
    meta = data.get("metadata") or {}
    return {
        "labels": meta.get("labels"),
        "annotations": meta.get("annotations"),
        **{k: v for k, v in data.items() if k not in ("metadata", "status")},
    }


@pytest.mark.parametrize("example", cases())
def test_dry_run_create_and_apply(example: Path, client: Client, namespace: str) -> None:
    objects = rendered(example, namespace)
    kinds = {o.kind for o in objects}
    assert {"DynamoComponentDeployment", "Deployment", "Service", "ServiceAccount"} <= kinds
    for obj in objects:
        created = client.create(codecs.from_dict(obj.create_manifest()), dry_run=True)
        assert created.metadata.name == obj.name
        assert created.metadata.ownerReferences[0].controller is True
        applied = client.apply(
            codecs.from_dict(obj.manifest()),
            field_manager=obj.manager,
            force=True,
            dry_run=True,
        )
        assert applied.metadata.name == obj.name


@pytest.mark.parametrize("example", cases())
def test_applied_objects_converge(example: Path, client: Client, namespace: str) -> None:
    # Content applies without owner references: no owner exists, and the garbage collector
    # would delete dependents of a missing owner while the test runs.
    objects = rendered(example, namespace)
    for obj in objects:
        client.apply(codecs.from_dict(obj.manifest()), field_manager=obj.manager, force=True)
    for obj in objects:
        resource = type(codecs.from_dict(obj.manifest()))
        live = client.get(resource, obj.name, namespace=namespace)
        again = client.apply(
            codecs.from_dict(obj.manifest()), field_manager=obj.manager, force=True, dry_run=True
        )
        assert server_view(again) == server_view(live), f"{obj.kind}/{obj.name} does not converge"
        assert again.metadata.resourceVersion == live.metadata.resourceVersion


@pytest.mark.parametrize(
    "version", [pytest.param(v, marks=pytest.mark.lws(v), id=v) for v in LWS_VERSIONS]
)
def test_lws_keeps_explicit_rollout_and_network_config(
    version: str, control_plane: ControlPlane, client: Client, namespace: str
) -> None:
    assert control_plane.lws_version == version
    example = REPO / "examples" / "disagg-multinode.yaml"
    lws = [o for o in rendered(example, namespace) if o.kind == "LeaderWorkerSet"]
    assert len(lws) == 2
    for obj in lws:
        live = client.create(codecs.from_dict(obj.manifest()), dry_run=True).to_dict()
        assert live["spec"]["rolloutStrategy"] == {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1, "partition": 0},
        }
        assert live["spec"]["networkConfig"] == {"subdomainPolicy": "Shared"}
        assert live["spec"]["leaderWorkerTemplate"]["restartPolicy"] == (
            "RecreateGroupOnPodRestart"
        )
