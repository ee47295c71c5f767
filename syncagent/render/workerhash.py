"""The worker generation a graph carries, as upstream's operator recorded it (docs/parity.md D1).

Upstream names worker components (types ``worker``, ``prefill``, ``decode``) with a worker-hash
suffix and records the active generation on the graph: ``nvidia.com/current-worker-hash`` (v1)
and ``nvidia.com/current-worker-hash-v2`` (v2) (``setCurrentWorkerHashes``). For a converged
graph the hash its names carry is v1 when present, else v2 (``workerHashForDCDGeneration`` with
the recorded hashes equal to the desired ones). syncagent never computes that hash (upstream's
``ComputeDGDWorkersSpecHash`` hashes Go's JSON of generated DCDs); it reuses the recorded one,
so a graph upstream's operator served is taken over under the same names.

``legacy`` is upstream's sentinel for worker DCDs made before worker hashes existed
(``initializeWorkerHashIfNeeded``): those DCDs keep their unsuffixed names, and upstream is then
midway through replacing them by a generation whose hash only its own code computes. syncagent
renders such a graph without a suffix: the unsuffixed (legacy) generation stays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from syncagent.render import labels as L

# Upstream ``IsWorkerComponent``'s types (render.inputs re-exports it).
WORKER_TYPES: Final = frozenset({"worker", "prefill", "decode"})
LEGACY: Final = "legacy"
WORKER_SUFFIX_ENV: Final = "DYN_NAMESPACE_WORKER_SUFFIX"


def active_worker_hash(annotations: Mapping[str, str] | None) -> str:
    """The recorded worker hash of a graph's annotations; ``""`` for none or ``legacy``."""
    values = annotations or {}
    v1 = values.get(L.CURRENT_WORKER_HASH) or ""
    if v1:
        # A legacy v1 stands for the unsuffixed generation (upstream deletes v2 beside it).
        return "" if v1 == LEGACY else v1
    return values.get(L.CURRENT_WORKER_HASH_V2) or ""


def is_worker(component_type: str | None) -> bool:
    """Upstream ``IsWorkerComponent``: the types whose names carry the worker hash."""
    return (component_type or "") in WORKER_TYPES


def worker_suffix(component_type: str | None, worker_hash: str) -> str:
    """The name suffix of a component: the worker hash for a worker, nothing for the rest."""
    return worker_hash if is_worker(component_type) else ""


def runtime_namespace(dynamo_namespace: str, component_type: str | None, worker_hash: str) -> str:
    """Upstream ``ComponentRuntimeNamespace``: a worker's Dynamo namespace plus its hash."""
    if dynamo_namespace and worker_suffix(component_type, worker_hash):
        return f"{dynamo_namespace}-{worker_hash}"
    return dynamo_namespace
