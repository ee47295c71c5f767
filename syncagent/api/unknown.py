"""Unknown fields of a DGD/DCD, as one-line warnings naming the field and the close known one.

Two kinds (from :func:`syncagent.api.schemacheck.check`): fields the API server prunes (outside
``x-kubernetes-preserve-unknown-fields``; its own warning is ``unknown field "<path>"``) and
fields it keeps where our CRD preserves unknown fields for upstream's sake (docs/api.md §1).
Upstream's own fields there (``frontendSidecar``, ``providerOverride``...) are expected and not
reported; anything else is most likely a typo (``replicaz``) that would be copied on silently.
"""

from __future__ import annotations

import difflib
import re

from syncagent.api.schemacheck import Unknown

# Fields of upstream's v1beta1 CRD (deploy/operator/config/crd/bases) that our CRD keeps
# without declaring them, by the field that holds them.
_COMPONENT = frozenset(
    {
        "compilationCache",
        "frontendSidecar",
        "providerOverride",
        "runtimeVersionOverride",
        "topologyConstraint",
    }
)
_GRAPH = frozenset({"priorityClassName", "providerOverride", "topologyConstraint", "experimental"})
_UPSTREAM_BY_PARENT: dict[str, frozenset[str]] = {
    "spec": _GRAPH | _COMPONENT,  # a DGD spec, or a DCD spec (component fields)
    "component": _COMPONENT,
    "experimental": frozenset({"failover", "gpuMemoryService", "grove"}),
    "checkpoint": frozenset({"deletionPolicy", "identity", "mode", "targetContainerName"}),
    "multinode": frozenset({"leader", "worker"}),
}
_COMPONENT_PATH = re.compile(r"^spec\.components\[\d+\]$")


def _parent_and_key(path: str) -> tuple[str, str]:
    parent, _, key = path.rpartition(".")
    return parent, key


def _is_upstream(parent: str, key: str) -> bool:
    holder = "component" if _COMPONENT_PATH.match(parent) else parent.rpartition(".")[2]
    return key in _UPSTREAM_BY_PARENT.get(holder, frozenset())


def close_match(key: str, known: tuple[str, ...]) -> str | None:
    """The declared field ``key`` most likely misspells, if any is close."""
    found = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    if not found:
        lowered = {k.lower(): k for k in known}
        return lowered.get(key.lower())
    return found[0]


def warnings(unknown: list[Unknown]) -> list[str]:
    """``<path>: unknown field ...`` for each field worth a warning, in document order."""
    out = []
    for item in unknown:
        parent, key = _parent_and_key(item.path)
        if not item.pruned and _is_upstream(parent, key):
            continue
        out.append(message(item, key=key))
    return out


def message(item: Unknown, *, key: str) -> str:
    guess = close_match(key, item.known)
    hint = f'did you mean "{guess}"? ' if guess else ""
    fate = "the API server drops it" if item.pruned else "syncagent ignores it"
    return f'{item.path}: unknown field "{item.path}" ({fate}); {hint}rename or remove it'
