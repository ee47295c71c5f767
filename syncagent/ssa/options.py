"""How one write is made: the options every apply verb shares, and the caller's live view."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from syncagent.ssa.errors import Conflict

# Given the conflicts of a non-forced dry run and the live object, the paths to leave out.
OnConflict = Callable[[Sequence[Conflict], Mapping[str, Any] | None], Collection[str]]


@dataclass(frozen=True, slots=True)
class ApplyOptions:
    """The one options object of :meth:`Engine.apply`, :meth:`Engine.preview` and
    :meth:`Engine.apply_all`.

    ``manager``: the field manager. ``force``: take fields other managers own (a conflict is
    then reported on the entry instead of raised). ``subresource``: ``""`` or ``status``.
    ``resource_version_precondition``: the desired object carries ``metadata.resourceVersion``
    on purpose (the write fails if the object changed). ``on_conflict``: names conflicting paths to leave to their owner (a fight backs off).
    """

    manager: str
    force: bool = False
    subresource: str = ""
    resource_version_precondition: bool = False
    on_conflict: OnConflict | None = dataclasses.field(default=None, compare=False)

    def but(self, **changes: Any) -> ApplyOptions:
        """A copy with ``changes`` (``options.but(force=True)``)."""
        return dataclasses.replace(self, **changes)


class Absent(enum.Enum):
    """Marker for "the caller knows the object does not exist" (skips the GET)."""

    ABSENT = "absent"


class TypedObject(Protocol):
    """A typed client object (lightkube models); raw dicts compare more faithfully."""

    def to_dict(self) -> dict[str, Any]: ...


ABSENT = Absent.ABSENT
# The caller's view of the live object: a watch-cache entry, ABSENT, or None (GET it).
Live = Mapping[str, Any] | TypedObject | Absent | None
