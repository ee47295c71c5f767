"""Checkpoint gating shared by the graph programs (docs/api.md §2, docs/disaggregatedset.md §6).

Pure: which components wait for a checkpoint that is not ready, and the status parts that say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.api.component import CheckpointUse, Component, checkpoint_of
from syncagent.programs.view import Store, checkpoint_readiness


@dataclass(frozen=True, slots=True)
class Checkpoints:
    ready: dict[str, bool]  # checkpointRef -> ready
    uses: dict[str, CheckpointUse]  # component name -> its checkpoint, in spec order

    def waiting(self) -> list[tuple[str, str]]:
        """``(component, checkpoint)`` of every WaitForCheckpoint component not yet ready."""
        return [(name, use.ref) for name, use in self.uses.items() if use.holds(self.ready)]

    def gated(self, names: Sequence[str]) -> bool:
        """Whether any of ``names`` waits: then every selected DS role is held at zero."""
        return any(c in names for c, _ in self.waiting())

    def status(self) -> dict[str, dict[str, Any]]:
        return {
            name: {"checkpointName": use.ref, "ready": self.ready.get(use.ref, False)}
            for name, use in self.uses.items()
        }


def uses_of(components: Sequence[Component]) -> dict[str, CheckpointUse]:
    """Each component's checkpoint (one answer: :func:`syncagent.api.checkpoint_of` of the
    entry as written), for the components that restore from one."""
    return {c.name: use for c in components if (use := checkpoint_of(c.wire())) is not None}


def read_checkpoints(store: Store, namespace: str, components: Sequence[Component]) -> Checkpoints:
    """The readiness of the checkpoints ``components`` restore from."""
    uses = uses_of(components)
    refs = sorted({use.ref for use in uses.values()})
    return Checkpoints(checkpoint_readiness(store, namespace, refs), uses)
