"""Upstream's v2 worker hash, computed (syncagent/render/specworkerhash.py, docs/parity.md D1).

Expected hashes are upstream's own: each graph below, as written here, went once through
upstream's operator at 2a6da14c8 (the differential harness, tests/parity/differential/harness,
in namespace ``default``), and the value is the ``nvidia.com/current-worker-hash-v2`` it recorded
on the graph. The graphs carry the origin-version stamp upstream's admission writes, as the
graph upstream hashes does. Properties are upstream's ``internal/dynamo/hash_test.go``
(``IgnoresNonWorkers``, ``IgnoresNonRolloutFields``, ``ChangesOnPodAffectingFields``,
``EnvOrderMatters``, ``UsesResolvedRuntimeVersion``); ``NoWorkers`` hashes ``{}``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from syncagent.render.specworkerhash import compute_worker_hash, hashed_runtime_version
from tests.support.graphs import component, graph, typed

ORIGIN = {"nvidia.com/dynamo-operator-origin-version": "1.4.0"}


def _main(entry: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = entry["podTemplate"]["spec"]["containers"][0]
    return container


def disagg() -> dict[str, Any]:
    decode = component("decode", "decode")
    _main(decode)["resources"] = {
        "limits": {"nvidia.com/gpu": "1", "memory": "1.5Gi", "cpu": "1000m"}
    }
    _main(decode)["env"] = [{"name": "GREETING", "value": "a<b>&c"}]
    parts = [component("Frontend", "frontend"), component("prefill", "prefill"), decode]
    return graph("default", "disagg", parts, **ORIGIN)


def multinode() -> dict[str, Any]:
    worker = component("worker", "worker", nodes=2)
    _main(worker)["command"] = ["/bin/sh", "-c"]
    _main(worker)["args"] = ["python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B && echo done"]
    return graph("default", "multinode", [component("Frontend", "frontend"), worker], **ORIGIN)


def runtime_version() -> dict[str, Any]:
    worker = component("worker", "worker", modelRef={"name": "Qwen/Qwen3-0.6B"})
    _main(worker)["image"] = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0"
    parts = [component("Frontend", "frontend"), worker]
    return graph("default", "runtime-version", parts, **ORIGIN)


def no_workers() -> dict[str, Any]:
    return graph("default", "no-workers", [component("Frontend", "frontend")], **ORIGIN)


@pytest.mark.parametrize(
    ("build", "recorded"),
    [
        (disagg, "139eaa0e"),  # quantities, HTML-sensitive env, prefill/decode sub-types
        (multinode, "3b263dd4"),  # a multinode launch command holding "&&"
        (runtime_version, "99fc63a0"),  # image tag 1.6.0 hashed, a model reference
        (no_workers, "44136fa3"),  # sha256("{}")
    ],
)
def test_the_hash_is_the_one_upstream_records(build: Any, recorded: str) -> None:
    assert compute_worker_hash(typed(build())) == recorded


def _changed(change: Any) -> str:
    body = disagg()
    change(body["spec"]["components"])
    return compute_worker_hash(typed(body))


def test_replicas_and_non_workers_leave_the_hash_alone() -> None:
    base = compute_worker_hash(typed(disagg()))

    def scale(parts: list[dict[str, Any]]) -> None:
        parts[1]["replicas"] = 5
        parts[2]["minAvailable"] = 1

    def edit_frontend(parts: list[dict[str, Any]]) -> None:
        _main(parts[0])["image"] = "other:2"

    assert _changed(scale) == base
    assert _changed(edit_frontend) == base


def test_a_worker_pod_change_and_env_order_change_the_hash() -> None:
    base = compute_worker_hash(typed(disagg()))

    def image(parts: list[dict[str, Any]]) -> None:
        _main(parts[1])["image"] = "other:2"

    def env_order(parts: list[dict[str, Any]]) -> None:
        _main(parts[2])["env"] = [{"name": "B", "value": "1"}, *_main(parts[2])["env"]]

    def reordered(parts: list[dict[str, Any]]) -> None:
        env_order(parts)
        _main(parts[2])["env"].reverse()

    assert _changed(image) != base
    assert _changed(env_order) != _changed(reordered)


def test_an_equivalent_quantity_hashes_alike() -> None:
    def spelled(parts: list[dict[str, Any]]) -> None:
        _main(parts[2])["resources"]["limits"].update({"memory": "1536Mi", "cpu": "1"})

    assert _changed(spelled) == compute_worker_hash(typed(disagg()))


@pytest.mark.parametrize(
    ("image", "override", "expected"),
    [
        ("repo/vllm-runtime:1.6.0", "", "1.6.0"),
        ("repo/vllm-runtime:v1.5.0-rc2", "", "1.5.0"),
        ("repo/vllm-runtime:1.4.9", "", ""),  # before 1.5.0: not hashed
        ("registry:5000/vllm-runtime", "", ""),  # no tag (the colon is the port)
        ("repo/vllm-runtime:1.6.0@sha256:abc", "", "1.6.0"),
        ("repo/vllm-runtime:latest", "1.7.1", "1.7.1"),
        ("repo/vllm-runtime:1.6.0", "v1.7.1", ""),  # an override is strict semver
    ],
)
def test_the_runtime_version_resolves_as_upstreams(
    image: str, override: str, expected: str
) -> None:
    spec: dict[str, Any] = {
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": image}]}}
    }
    if override:
        spec["runtimeVersionOverride"] = override
    assert hashed_runtime_version(spec) == expected


def test_the_same_graph_hashes_the_same_twice() -> None:
    body = disagg()
    assert compute_worker_hash(typed(body)) == compute_worker_hash(typed(copy.deepcopy(body)))
