"""Stale objects of other pathways and their removal (docs/routing.md §3).

Principle: never delete the serving workload before its replacement is ready. The programs call
:func:`other_pathways` and :func:`stale_own` to find what remains, :func:`retire` with their own
readiness to remove it, and :func:`describe` to name what still waits (the ``WorkloadPathway``
message). :func:`retire` is the only place a program deletes a replaced workload.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from syncagent.kube import being_deleted, controlled_by, kinds
from syncagent.kube.objects import Body
from syncagent.programs.base import NORMAL, QueuedEvent
from syncagent.programs.removal import delete_component
from syncagent.programs.view import Obj, Store
from syncagent.programs.writes import Writer
from syncagent.rest.resource import Resource

if TYPE_CHECKING:
    from syncagent.programs.context import GraphContext


def _name(obj: Obj) -> str:
    return Body(obj).meta.name


def owned(store: Store, kind: str, namespace: str, uid: str) -> list[Obj]:
    return [o for o in store.list(kind, namespace, owner=uid) if controlled_by(o, uid)]


def other_pathways(ctx: GraphContext, pathway: str) -> list[Obj]:
    """Objects of the kinds only other programs own that this graph controls, in registry
    order: what ``pathway`` removes once it serves the graph."""
    mine = set(ctx.programs.by_pathway(pathway).owns)
    return [
        obj
        for kind in ctx.programs.owned_kinds()
        if kind not in mine
        for obj in owned(ctx.store, kind.kind, ctx.namespace, ctx.uid)
    ]


def stale_own(ctx: GraphContext, kind: Resource, *, keep: Collection[str]) -> list[Obj]:
    """Objects of one of the program's own kinds this graph controls, except ``keep`` (names)."""
    return [o for o in owned(ctx.store, kind.kind, ctx.namespace, ctx.uid) if _name(o) not in keep]


def describe(objects: list[Obj]) -> list[str]:
    """``<Kind> <name>`` items of the ``WorkloadPathway`` message, in a stable order."""
    return sorted(f"{o.get('kind')} {_name(o)}" for o in objects)


async def retire(ctx: GraphContext, stale: Sequence[Obj], *, when: bool) -> list[Obj]:
    """Delete ``stale`` (what the graph's former workload left) only ``when`` the workload
    replacing it is ready; what is still waiting (nothing once retired).

    The one gate of every migration and every replacement (docs/routing.md §3): a serving
    workload is never deleted before its replacement is ready. Only objects this graph controls
    are deleted, each with its UID precondition (``Writer.delete``); one being deleted already
    is left to finish. Each delete is a ``StaleWorkloadDeleted`` event naming the pathway.
    """
    for obj in retirable(stale, when=when, controller=ctx.uid):
        await _delete(ctx.writer, ctx.store, obj, pathway=ctx.selection.pathway)
    return [] if when else list(stale)


def retirable(stale: Sequence[Obj], *, when: bool, controller: str) -> list[Obj]:
    """What of ``stale`` :func:`retire` deletes: nothing before the replacement is ready
    (``when``); then each object with a UID (the delete's precondition) that ``controller``
    (the graph's UID) controls and that is not being deleted already."""
    if not when:
        return []
    return [
        obj
        for obj in stale
        if Body(obj).meta.uid and controlled_by(obj, controller) and not being_deleted(obj)
    ]


async def _delete(writer: Writer, store: Store, obj: Obj, *, pathway: str) -> None:
    kind = str(obj.get("kind"))
    if kind == kinds.DCD.kind:
        gone = await delete_component(writer, store, obj, event=False)
    else:
        gone = await writer.delete(obj, event=False)
    if gone:
        writer.events.append(
            QueuedEvent(
                NORMAL,
                "StaleWorkloadDeleted",
                f"Deleted {kind} {_name(obj)} after the {pathway} pathway became ready",
            )
        )
