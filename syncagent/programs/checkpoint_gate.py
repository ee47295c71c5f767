"""Checkpoint gating shared by the graph programs (api.md §2.3, disaggregatedset.md §6.1).

Pure: which components wait for a checkpoint that is not ready, and the status parts that say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.api.component import Component, checkpoint_of
from syncagent.programs.view import Store, checkpoint_readiness


@dataclass(frozen=True, slots=True)
class Checkpoints:
    ready: dict[str, bool]  # checkpointRef -> ready
    components: list[Component]

    def waiting(self) -> list[tuple[str, str]]:
        """``(component, checkpoint)`` of every WaitForCheckpoint component not yet ready."""
        out = []
        for component in self.components:
            use = checkpoint_of(component.wire())
            if use is not None and use.holds(self.ready):
                out.append((component.name, use.ref))
        return out

    def gated(self, names: Sequence[str]) -> bool:
        """Whether any of ``names`` waits: then every selected DS role is held at zero."""
        return any(c in names for c, _ in self.waiting())

    def status(self) -> dict[str, dict[str, Any]]:
        out = {}
        for component in self.components:
            use = checkpoint_of(component.wire())
            if use is not None:
                out[component.name] = {
                    "checkpointName": use.ref,
                    "ready": self.ready.get(use.ref, False),
                }
        return out


def read_checkpoints(store: Store, namespace: str, components: Sequence[Component]) -> Checkpoints:
    """The readiness of the checkpoints ``components`` restore from (one answer for a
    component's checkpoint: :func:`syncagent.api.checkpoint_of` of the entry as written)."""
    refs = sorted({use.ref for c in components if (use := checkpoint_of(c.wire()))})
    return Checkpoints(checkpoint_readiness(store, namespace, refs), list(components))
