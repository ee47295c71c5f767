"""Stale objects of other pathways and their removal (spec/routing.md §3).

Principle: never delete the serving workload before its replacement is ready. The programs call
:func:`stale_workloads` to name what remains (the ``WorkloadPathway`` message) and
:func:`delete_stale` once their own readiness allows it. Deletes carry a UID precondition and
touch only objects this graph controls.
"""

from __future__ import annotations

from collections.abc import Collection

from syncagent.programs.base import NORMAL, QueuedEvent
from syncagent.programs.removal import WORKLOAD_KINDS
from syncagent.programs.view import Obj, Store, being_deleted, controlled_by
from syncagent.programs.writes import Writer

PCS = "PodCliqueSet"
DS = "DisaggregatedSet"
DCD = "DynamoComponentDeployment"


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name"))


def owned(store: Store, kind: str, namespace: str, uid: str) -> list[Obj]:
    return [o for o in store.list(kind, namespace) if controlled_by(o, uid)]


def stale_pcs(store: Store, namespace: str, uid: str, *, keep: str | None = None) -> list[Obj]:
    return [o for o in owned(store, PCS, namespace, uid) if _name(o) != keep]


def stale_ds(store: Store, namespace: str, uid: str, *, keep: str | None = None) -> list[Obj]:
    return [o for o in owned(store, DS, namespace, uid) if _name(o) != keep]


def stale_dcds(store: Store, namespace: str, uid: str, *, keep: Collection[str]) -> list[Obj]:
    """DCDs of this graph that the target pathway does not render (by name)."""
    return [o for o in owned(store, DCD, namespace, uid) if _name(o) not in keep]


def describe(objects: list[Obj]) -> list[str]:
    """``<Kind> <name>`` items of the ``WorkloadPathway`` message, in a stable order."""
    return sorted(f"{o.get('kind')} {_name(o)}" for o in objects)


async def delete_stale(writer: Writer, store: Store, obj: Obj, *, pathway: str) -> None:
    """Delete one stale workload object (a DCD with its workloads); ``StaleWorkloadDeleted``."""
    if being_deleted(obj):
        return
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind"))
    # The DCD first, marked deleted: its own reconcile then stops, and whatever a reconcile
    # that read it just before creates for it goes with it (docs/retries.md).
    gone = await writer.delete(obj, event=False, foreground=kind == DCD)
    if kind == DCD:
        for workload_kind in WORKLOAD_KINDS:
            for child in store.list(workload_kind, str(meta.get("namespace"))):
                if controlled_by(child, str(meta.get("uid"))) and not being_deleted(child):
                    await writer.delete(child, event=False)
    if gone:
        writer.events.append(
            QueuedEvent(
                NORMAL,
                "StaleWorkloadDeleted",
                f"Deleted {kind} {_name(obj)} after the {pathway} pathway became ready",
            )
        )
