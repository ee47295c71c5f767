"""The worker generation on the Component pathway's worker objects (docs/parity.md D1, D2).

Which hash a graph records is :mod:`syncagent.api.workerhash`'s rule; this module adds what the
renderer derives from it: the worker suffix variable and the runtime namespace.
"""

from __future__ import annotations

from typing import Final

from syncagent.api.workerhash import (
    LEGACY,
    WORKER_TYPES,
    active_worker_hash,
    is_worker,
    worker_suffix,
)

WORKER_SUFFIX_ENV: Final = "DYN_NAMESPACE_WORKER_SUFFIX"


def runtime_namespace(dynamo_namespace: str, component_type: str | None, worker_hash: str) -> str:
    """Upstream ``ComponentRuntimeNamespace``: a worker's Dynamo namespace plus its hash."""
    if dynamo_namespace and worker_suffix(component_type, worker_hash):
        return f"{dynamo_namespace}-{worker_hash}"
    return dynamo_namespace


__all__ = [
    "LEGACY",
    "WORKER_SUFFIX_ENV",
    "WORKER_TYPES",
    "active_worker_hash",
    "is_worker",
    "runtime_namespace",
    "worker_suffix",
]
