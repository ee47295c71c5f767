"""Graphs (DynamoGraphDeployments) to apply in the cluster and e2e tiers (no tests here)."""

from __future__ import annotations

import copy
from typing import Any

from syncagent.api import Component, DynamoGraphDeployment
from tests.support.kube import DGD

ENABLE_DS = "nvidia.com/enable-disaggregatedset"
ENABLE_GROVE = "nvidia.com/enable-grove"


def component(
    name: str, ctype: str, *, replicas: int = 1, multinode: bool = False, **extra: Any
) -> dict[str, Any]:
    main: dict[str, Any] = {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"}
    if ctype == "frontend":
        main["command"] = ["python3", "-m", "dynamo.frontend"]
    else:
        main["command"] = ["python3", "-m", "dynamo.vllm"]
        main["args"] = ["--model", "Qwen/Qwen3-0.6B"]
    out: dict[str, Any] = {
        "name": name,
        "type": ctype,
        "replicas": replicas,
        "podTemplate": {"spec": {"containers": [main]}},
    }
    if multinode:
        out["multinode"] = {"nodeCount": 2}
    out.update(extra)
    return out


def graph(
    ns: str, name: str, components: list[dict[str, Any]], **annotations: str
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": DGD,
        "metadata": meta,
        "spec": {"backendFramework": "vllm", "components": copy.deepcopy(components)},
    }


def example_graph(ns: str, name: str = "demo") -> dict[str, Any]:
    """Frontend + single-node decode + multinode prefill (an LWS)."""
    return graph(
        ns,
        name,
        [
            component("Frontend", "frontend"),
            component("decode", "decode", replicas=2),
            component("prefill", "prefill", multinode=True),
        ],
    )


def ds_components(**extra: Any) -> list[dict[str, Any]]:
    """Frontend + multinode decode + multinode prefill (disaggregatedset.md example 1)."""
    return [
        component("Frontend", "frontend"),
        component("decode", "decode", multinode=True, **extra),
        component("prefill", "prefill", multinode=True, **extra),
    ]


def ds_graph(ns: str, name: str, components: list[dict[str, Any]], **annotations: str) -> dict:
    """:func:`graph` under the name the DS tests use (they call the live object ``graph``)."""
    return graph(ns, name, components, **annotations)


def typed(graph: dict[str, Any]) -> DynamoGraphDeployment:
    """A wire-form graph as the renderers take it: parsed into the model once."""
    return DynamoGraphDeployment.model_validate(graph)


def typed_components(components: list[dict[str, Any]]) -> list[Component]:
    """Wire-form ``spec.components`` entries as the per-component helpers take them."""
    return [Component.model_validate(c) for c in components]
