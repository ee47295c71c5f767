"""Stale objects of other pathways and their removal (docs/routing.md §3).

Principle: never delete the serving workload before its replacement is ready. The programs call
:func:`other_pathways` and :func:`stale_own` to name what remains (the ``WorkloadPathway``
message) and
:func:`delete_stale` once their own readiness allows it. Deletes carry a UID precondition and
touch only objects this graph controls.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from syncagent.kube import being_deleted, controlled_by, kinds
from syncagent.kube.objects import Body
from syncagent.programs.base import NORMAL, QueuedEvent
from syncagent.programs.removal import WORKLOAD_KINDS
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


async def delete_stale(writer: Writer, store: Store, obj: Obj, *, pathway: str) -> None:
    """Delete one stale workload object (a DCD with its workloads); ``StaleWorkloadDeleted``."""
    if being_deleted(obj):
        return
    meta = Body(obj).meta
    kind = str(obj.get("kind"))
    # The DCD first, marked deleted: its own reconcile then stops, and whatever a reconcile
    # that read it just before creates for it goes with it (docs/retries.md).
    gone = await writer.delete(obj, event=False, foreground=kind == kinds.DCD.kind)
    if kind == kinds.DCD.kind:
        for workload_kind in WORKLOAD_KINDS:
            for child in store.list(workload_kind, meta.namespace, owner=meta.uid):
                if controlled_by(child, meta.uid) and not being_deleted(child):
                    await writer.delete(child, event=False)
    if gone:
        writer.events.append(
            QueuedEvent(
                NORMAL,
                "StaleWorkloadDeleted",
                f"Deleted {kind} {_name(obj)} after the {pathway} pathway became ready",
            )
        )
