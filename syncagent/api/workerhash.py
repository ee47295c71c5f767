"""The worker generation upstream's operator records on a graph (docs/parity.md D1).

Upstream names worker components (types ``worker``, ``prefill``, ``decode``) with a worker-hash
suffix and records the active generation on the graph: ``nvidia.com/current-worker-hash`` (v1)
and ``nvidia.com/current-worker-hash-v2`` (v2) (``setCurrentWorkerHashes``). For a converged
graph the hash its names carry is v1 when present, else v2 (``workerHashForDCDGeneration`` with
the recorded hashes equal to the desired ones). syncagent never computes that hash (upstream's
``ComputeDGDWorkersSpecHash`` hashes Go's JSON of generated DCDs); the Component pathway reuses
the recorded one, so a graph upstream's operator served is taken over under the same names.

``legacy`` is upstream's sentinel for worker DCDs made before worker hashes existed
(``initializeWorkerHashIfNeeded``): those DCDs keep their unsuffixed names, and upstream is then
midway through replacing them by a generation whose hash only its own code computes. It counts
as no hash: the unsuffixed (legacy) generation stays.

Here (not in ``render``) because validation counts the suffix in the names it checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

CURRENT_WORKER_HASH: Final = "nvidia.com/current-worker-hash"
CURRENT_WORKER_HASH_V2: Final = "nvidia.com/current-worker-hash-v2"
LEGACY: Final = "legacy"
# Upstream ``IsWorkerComponent``'s types.
WORKER_TYPES: Final = frozenset({"worker", "prefill", "decode"})


def active_worker_hash(annotations: Mapping[str, str] | None) -> str:
    """The recorded worker hash of a graph's annotations; ``""`` for none or ``legacy``."""
    values = annotations or {}
    v1 = values.get(CURRENT_WORKER_HASH) or ""
    if v1:
        # A legacy v1 stands for the unsuffixed generation (upstream deletes v2 beside it).
        return "" if v1 == LEGACY else v1
    return values.get(CURRENT_WORKER_HASH_V2) or ""


def is_worker(component_type: str | None) -> bool:
    """Upstream ``IsWorkerComponent``: the types whose names carry the worker hash."""
    return (component_type or "") in WORKER_TYPES


def worker_suffix(component_type: str | None, worker_hash: str) -> str:
    """The name suffix of a component: the worker hash for a worker, nothing for the rest."""
    return worker_hash if is_worker(component_type) else ""
