"""An existing install takes the new object metadata without rolling a pod.

syncagent's Deployments, LeaderWorkerSets, Services and DCDs now carry upstream's metadata
(docs/parity.md, "Object metadata"): no pod-only labels on workloads and Services, no
annotations on a LeaderWorkerSet, no graph ``spec.labels``/``spec.annotations`` on DCDs. Here
the objects an earlier syncagent applied for each shipped example (its own ``render`` output,
kept in ``data/rendered-before-upstream-metadata``) are applied first, then today's rendering
under the same field managers, as an upgraded agent applies them. Every apply must succeed, and
no pod template, selector, Service selector or DCD spec may change: a Deployment's or
LeaderWorkerSet's ``metadata.generation`` stays where it was, so neither rolls.

The same release also reorders ``env`` as upstream does (docs/pod-rules.md, "Environment
order"), a pod-template change that rolls such pods once, by design. To hold the metadata change
alone, the earlier rendering's variables are put in today's order before it is applied; nothing
else of it is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube import Client, codecs
from lightkube.generic_resource import create_namespaced_resource

from syncagent.api import load_objects
from syncagent.cli.pathways import PROGRAMS
from syncagent.cli.render.offline import render_object
from syncagent.programs import capabilities

REPO = Path(__file__).resolve().parents[2]
BEFORE = Path(__file__).parent / "data" / "rendered-before-upstream-metadata"
EXAMPLES = ("agg", "disagg", "disagg-multinode")
RENDERED_NAMESPACE = "dynamo-demo"  # the -n the old rendering was made with
POD_ONLY_LABELS = (
    "nvidia.com/selector",
    "nvidia.com/dynamo-component-type",
    "nvidia.com/metrics-enabled",
)

create_namespaced_resource(
    "nvidia.com", "v1beta1", "DynamoComponentDeployment", "dynamocomponentdeployments"
)
create_namespaced_resource("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet", "leaderworkersets")

Applied = list[tuple[str, dict[str, Any]]]  # (field manager, manifest)


def _without_owner(manifest: dict[str, Any]) -> dict[str, Any]:
    # No owner exists here, and the garbage collector deletes dependents of a missing owner.
    manifest["metadata"].pop("ownerReferences", None)
    return manifest


def before(example: str, namespace: str) -> Applied:
    """The earlier rendering, moved into ``namespace`` (Dynamo namespaces included)."""
    text = (BEFORE / f"{example}.yaml").read_text().replace(RENDERED_NAMESPACE, namespace)
    out: Applied = []
    for chunk in text.split("\n---\n")[1:]:
        manager = chunk.split("\n", 1)[0].removeprefix("# manager: ").strip()
        out.append((manager, _without_owner(yaml.safe_load(chunk))))
    return out


def now(example: str, namespace: str) -> Applied:
    path = REPO / "examples" / f"{example}.yaml"
    out: Applied = []
    for obj in load_objects(path.read_text(), source=str(path)):
        obj.metadata.namespace = namespace
        for r in render_object(
            obj, caps=capabilities.offline({}, declared=PROGRAMS.capabilities()), programs=PROGRAMS
        ):
            out.append((r.manager, _without_owner(r.manifest())))
    return out


def apply_all(client: Client, objects: Applied) -> dict[tuple[str, str], dict[str, Any]]:
    """Applies each object as the agent does (forced, under its manager); the live objects."""
    live = {}
    for manager, manifest in objects:
        obj = client.apply(codecs.from_dict(manifest), field_manager=manager, force=True)
        live[(manifest["kind"], manifest["metadata"]["name"])] = obj.to_dict()
    return live


def pods_and_selectors(obj: dict[str, Any]) -> Any:
    """What must not move: a workload's whole spec (pod templates, selector) and generation, a
    Service's selector, a DCD's spec (it carries the pod template the DCD renders)."""
    kind, spec = obj["kind"], obj.get("spec") or {}
    if kind in ("Deployment", "LeaderWorkerSet"):
        return spec, obj["metadata"]["generation"]
    if kind == "Service":
        return spec.get("selector")
    if kind == "DynamoComponentDeployment":
        return spec
    return None


def _env_lists(node: Any) -> list[list[dict[str, Any]]]:
    if isinstance(node, dict):
        own = [node["env"]] if isinstance(node.get("env"), list) else []
        return own + [e for k, v in node.items() if k != "env" for e in _env_lists(v)]
    if isinstance(node, list):
        return [e for item in node for e in _env_lists(item)]
    return []


def in_todays_env_order(old: Applied, new: Applied) -> Applied:
    """``old`` with each env list ordered as the same list of today's rendering (same object,
    same place), which must hold the same variables."""
    today = {(m["kind"], m["metadata"]["name"]): m for _, m in new}
    for _, manifest in old:
        match = today.get((manifest["kind"], manifest["metadata"]["name"]))
        if match is None:
            continue
        for was, now_ in zip(_env_lists(manifest), _env_lists(match), strict=True):
            order = [e["name"] for e in now_]
            assert sorted(order) == sorted(e["name"] for e in was), (manifest["kind"], order)
            was.sort(key=lambda e: order.index(e["name"]))
    return old


@pytest.mark.lws("v0.10.0")
@pytest.mark.parametrize("example", EXAMPLES)
def test_new_metadata_applies_over_an_earlier_install_without_rolling(
    example: str, client: Client, namespace: str
) -> None:
    rendered = now(example, namespace)
    old = apply_all(client, in_todays_env_order(before(example, namespace), rendered))
    new = apply_all(client, rendered)
    assert set(new) == set(old), "the same objects, by kind and name"
    for key, live in new.items():
        assert pods_and_selectors(live) == pods_and_selectors(old[key]), f"{key} changed"
    workloads = [v for (kind, _), v in new.items() if kind in ("Deployment", "LeaderWorkerSet")]
    assert workloads
    for live in workloads:
        labels = live["metadata"].get("labels") or {}
        assert not set(POD_ONLY_LABELS) & set(labels), live["metadata"]["name"]
        if live["kind"] == "LeaderWorkerSet":
            assert not live["metadata"].get("annotations")
