"""Checkpoint gating shared by the DS and Grove programs (api.md §2.3, disaggregatedset.md §6.1).

Pure: which components wait for a checkpoint that is not ready, and the status parts that say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.programs.view import Store, checkpoint_readiness

WAIT = "WaitForCheckpoint"


def checkpoint_of(component: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(checkpointRef, startupPolicy)`` of an enabled checkpoint, if any."""
    ck = (component.get("experimental") or {}).get("checkpoint") or {}
    if ck.get("enabled") and ck.get("checkpointRef"):
        return str(ck["checkpointRef"]), str(ck.get("startupPolicy") or "Immediate")
    return None


@dataclass(frozen=True, slots=True)
class Checkpoints:
    ready: dict[str, bool]  # checkpointRef -> ready
    components: list[Mapping[str, Any]]

    def waiting(self) -> list[tuple[str, str]]:
        """``(component, checkpoint)`` of every WaitForCheckpoint component not yet ready."""
        out = []
        for component in self.components:
            ref = checkpoint_of(component)
            if ref and ref[1] == WAIT and not self.ready.get(ref[0], False):
                out.append((str(component["name"]), ref[0]))
        return out

    def gated(self, names: Sequence[str]) -> bool:
        """Whether any of ``names`` waits: then every selected DS role is held at zero."""
        return any(c in names for c, _ in self.waiting())

    def status(self) -> dict[str, dict[str, Any]]:
        out = {}
        for component in self.components:
            ref = checkpoint_of(component)
            if ref:
                out[str(component["name"])] = {
                    "checkpointName": ref[0],
                    "ready": self.ready.get(ref[0], False),
                }
        return out


def read_checkpoints(
    store: Store, namespace: str, components: Sequence[Mapping[str, Any]]
) -> Checkpoints:
    refs = sorted({r[0] for c in components if (r := checkpoint_of(c))})
    return Checkpoints(checkpoint_readiness(store, namespace, refs), list(components))
