"""What a program hands back to the outer reconciler (docs/design.md §8).

A program never writes DGD status itself: it returns the status it computed and the events it
raised; the controller persists the status once and emits the events only after that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

NORMAL = "Normal"
WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class QueuedEvent:
    """An event raised during a reconcile; ``on`` is the object it is about (None = the DGD)."""

    type: str
    reason: str
    message: str
    on: Mapping[str, Any] | None = None


@dataclass(slots=True)
class ProgramResult:
    """``status``: the whole status to persist; ``events``: raised by writes, emitted after it.
    ``retry``: the reconcile ended in an error, retry with backoff. ``requeue_after``: look
    again after that many seconds. ``conflict``: the error was a write whose precondition no
    longer held (the object changed meanwhile): the reconciler may retry without reporting it."""

    status: dict[str, Any]
    events: list[QueuedEvent] = field(default_factory=list)
    requeue_after: float | None = None
    retry: bool = False
    refused: bool = False  # an ownership refusal (reported as OwnershipConflict)
    conflict: bool = False


def write_event(
    action: str, kind: str, name: str, *, on: Mapping[str, Any] | None = None
) -> QueuedEvent:
    """``Create<Kind>`` / ``Update<Kind>`` / ``Delete<Kind>`` for a write that changed the cluster."""
    verb = {"created": ("Create", "Created"), "configured": ("Update", "Updated")}.get(
        action, ("Delete", "Deleted")
    )
    return QueuedEvent(NORMAL, f"{verb[0]}{kind}", f"{verb[1]} {kind} {name}", on)
