"""Graphs (DynamoGraphDeployments) of every tier: to apply on a server, or as a server would
hand them to the agent (no tests here)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from syncagent.api import Component, DynamoGraphDeployment
from tests.support.kube import DGD

ENABLE_DS = "nvidia.com/enable-disaggregatedset"
ENABLE_GROVE = "nvidia.com/enable-grove"


IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"


def component(
    name: str, ctype: str, *, replicas: int | None = 1, nodes: int = 1, **extra: Any
) -> dict[str, Any]:
    """One entry of ``spec.components``: a frontend or a vLLM worker on ``nodes`` nodes
    (``replicas=None`` leaves the field out, as a graph that relies on the default does)."""
    main: dict[str, Any] = {"name": "main", "image": IMAGE}
    if ctype == "frontend":
        main["command"] = ["python3", "-m", "dynamo.frontend"]
    else:
        main["command"] = ["python3", "-m", "dynamo.vllm"]
        main["args"] = ["--model", "Qwen/Qwen3-0.6B"]
    out: dict[str, Any] = {"name": name, "type": ctype}
    if replicas is not None:
        out["replicas"] = replicas
    out["podTemplate"] = {"spec": {"containers": [main]}}
    if nodes > 1:
        out["multinode"] = {"nodeCount": nodes}
    out.update(extra)
    return out


def main_container(image: str = "img:1", **extra: Any) -> dict[str, Any]:
    return {"name": "main", "image": image, **extra}


def worker(name: str, ctype: str, *, nodes: int = 2, **extra: Any) -> dict[str, Any]:
    """A worker as the pathway tests start from: multinode, replicas left to the default."""
    return component(name, ctype, replicas=extra.pop("replicas", None), nodes=nodes, **extra)


def frontend(name: str = "Frontend") -> dict[str, Any]:
    return component(name, "frontend")


def _document(metadata: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": DGD, "metadata": metadata, "spec": spec}


def graph(
    ns: str, name: str, components: list[dict[str, Any]], **annotations: str
) -> dict[str, Any]:
    """A graph to create on a server (which sets its uid and generation)."""
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = dict(annotations)
    return _document(meta, {"backendFramework": "vllm", "components": copy.deepcopy(components)})


def served_graph(
    name: str = "vllm-disagg",
    *,
    components: list[dict[str, Any]] | None = None,
    namespace: str = "ns",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A graph as a server would hand it to the agent (uid and generation set), for the tests
    that need no server; by default a frontend and a multinode decode and prefill."""
    if components is None:
        components = [frontend(), worker("decode", "decode"), worker("prefill", "prefill")]
    meta = {
        "name": name,
        "namespace": namespace,
        "uid": "uid-" + name,
        "generation": 1,
        "annotations": dict(annotations or {}),
    }
    return _document(meta, {"components": copy.deepcopy(components), **spec})


def annotate(pairs: dict[str, str]) -> Callable[[dict[str, Any]], None]:
    """A change for ``Kube.edit_graph``: ``pairs`` added to the graph's annotations."""

    def change(graph: dict[str, Any]) -> None:
        graph["metadata"].setdefault("annotations", {}).update(pairs)

    return change


def first_replicas(replicas: int) -> Callable[[dict[str, Any]], None]:
    """A change for ``Kube.edit_graph``: the first component scaled to ``replicas``."""

    def change(graph: dict[str, Any]) -> None:
        graph["spec"]["components"][0]["replicas"] = replicas

    return change


def example_graph(ns: str, name: str = "demo") -> dict[str, Any]:
    """Frontend + single-node decode + multinode prefill (an LWS)."""
    return graph(
        ns,
        name,
        [
            component("Frontend", "frontend"),
            component("decode", "decode", replicas=2),
            component("prefill", "prefill", nodes=2),
        ],
    )


def ds_components(**extra: Any) -> list[dict[str, Any]]:
    """Frontend + multinode decode + multinode prefill (disaggregatedset.md example 1)."""
    return [
        component("Frontend", "frontend"),
        component("decode", "decode", nodes=2, **extra),
        component("prefill", "prefill", nodes=2, **extra),
    ]


def grove_components() -> list[dict[str, Any]]:
    """Frontend + multinode decode: a graph Grove serves (one PodCliqueSet)."""
    return [component("frontend", "frontend"), component("decode", "decode", nodes=2)]


def ds_graph(ns: str, name: str, components: list[dict[str, Any]], **annotations: str) -> dict:
    """:func:`graph` under the name the DS tests use (they call the live object ``graph``)."""
    return graph(ns, name, components, **annotations)


def typed(graph: dict[str, Any]) -> DynamoGraphDeployment:
    """A wire-form graph as the renderers take it: parsed into the model once."""
    return DynamoGraphDeployment.model_validate(graph)


def typed_components(components: list[dict[str, Any]]) -> list[Component]:
    """Wire-form ``spec.components`` entries as the per-component helpers take them."""
    return [Component.model_validate(c) for c in components]
