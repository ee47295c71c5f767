"""What one apply did (or, for a plan, would do)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from syncagent.kube.objects import Body
from syncagent.ssa.errors import Conflict

Action = Literal["created", "configured", "unchanged"]


@dataclass(frozen=True, slots=True)
class ChangeSetEntry:
    """One object's outcome.

    ``object`` is the resulting object (for a plan, the dry-run result); ``before`` is the live
    object it was compared with (None when absent). ``conflicts`` are the fields a forced apply
    took from other managers, found by the non-forced dry run that precedes it; ``yielded`` the
    conflicting fields left to their owners instead (out of the applied object). ``differences``
    names the compared parts that changed (empty when unchanged).
    """

    action: Action
    subject: str
    object: dict[str, Any]
    manager: str
    subresource: str = ""
    before: dict[str, Any] | None = None
    conflicts: tuple[Conflict, ...] = ()
    yielded: tuple[Conflict, ...] = ()
    differences: tuple[str, ...] = ()
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return self.action != "unchanged"

    @property
    def resource_version(self) -> str:
        return Body(self.object).meta.resource_version
