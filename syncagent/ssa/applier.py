"""The one protocol every writer of objects goes through.

Two appliers implement it: :class:`~syncagent.ssa.engine.Engine`, which writes, and the plan
applier of ``syncagent plan`` (``inspect/planapplier.py``), whose writes are server-side dry
runs it records. Which one runs is decided once, where a command or the agent is put together;
the code that calls these verbs never asks which it has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from syncagent.rest.request import MERGE_PATCH
from syncagent.ssa.changeset import ChangeSetEntry
from syncagent.ssa.options import ApplyOptions, Live


class Applier(Protocol):
    """Reads and writes of raw objects; see :class:`~syncagent.ssa.engine.Engine` for each
    verb's contract. Where the appliers differ, the verb's documentation says so."""

    async def apply(
        self, desired: Mapping[str, Any], options: ApplyOptions, *, live: Live = None
    ) -> ChangeSetEntry: ...

    async def preview(
        self, desired: Mapping[str, Any], options: ApplyOptions, *, live: Live = None
    ) -> ChangeSetEntry:
        """What ``apply`` would make of ``desired``, by a server-side dry run; never writes."""
        ...

    async def get(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any] | None:
        """The object as this applier's writes leave it (a plan: as its dry runs compose it)."""
        ...

    async def read(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any] | None:
        """The server's copy, always."""
        ...

    async def list(self, api_version: str, kind: str, namespace: str) -> list[dict[str, Any]]: ...

    async def path_of(self, obj: Mapping[str, Any], *, subresource: str = "") -> str: ...

    async def live_view(
        self, obj: Mapping[str, Any], live: Live = None
    ) -> dict[str, Any] | None: ...

    async def view_for_create(self, obj: Mapping[str, Any], live: Live) -> dict[str, Any] | None:
        """The view to decide a create on; the engine leaves an unsaid ``live`` to its
        create-only create, a plan (whose creates are dry runs, never create-only) reads."""
        ...

    async def owner_alive(self, owner: Mapping[str, Any], *, uid: str) -> bool:
        """Whether ``owner`` exists with ``uid`` and is not being deleted, as a create for it
        needs; a plan's owners exist in the plan, so it answers yes without a request."""
        ...

    async def delete(
        self,
        obj: Mapping[str, Any],
        *,
        uid: str,
        resource_version: str | None = None,
        propagation: str = "Background",
    ) -> bool: ...

    async def patch(
        self,
        obj: Mapping[str, Any],
        body: Any,
        *,
        manager: str,
        content_type: str = MERGE_PATCH,
        subresource: str = "",
    ) -> dict[str, Any]: ...

    async def replace_managed_fields(
        self, live: Mapping[str, Any], managed_fields: list[dict[str, Any]]
    ) -> dict[str, Any]: ...

    async def create(self, obj: Mapping[str, Any], *, manager: str) -> dict[str, Any]: ...

    async def update(self, obj: Mapping[str, Any], *, manager: str) -> dict[str, Any]: ...
