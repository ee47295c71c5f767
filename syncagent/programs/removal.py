"""Which DCDs of a graph are stale, and removing them (docs/rendering.md §1, docs/routing.md §3).

- A DCD controlled by the graph whose component no longer exists is deleted in the same
  reconcile, together with the workloads it controls.
- A DCD whose name differs from the rendered name for its component (another worker generation:
  a worker hash the graph no longer records, or none where it now records one, docs/parity.md
  D1) is deleted only once the replacement DCD is ready (``migration.retire``).
Deletes carry the UID precondition and touch only objects this graph (or its DCD) controls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.kube import being_deleted, controlled_by, kinds
from syncagent.kube.objects import Body
from syncagent.programs.view import Obj, Store
from syncagent.programs.writes import Writer

WORKLOAD_KINDS = (kinds.DEPLOYMENT.kind, kinds.LEADER_WORKER_SET.kind)


@dataclass(frozen=True, slots=True)
class Stale:
    removed: list[Obj]  # component gone: delete now
    replaced: list[Obj]  # renamed: delete once the replacement is ready


def stale_dcds(live: Sequence[Obj], *, rendered_names: Mapping[str, str]) -> Stale:
    """``rendered_names``: component name -> the DCD name rendered for it."""
    removed, replaced = [], []
    for dcd in live:
        name = Body(dcd).meta.name
        component = (dcd.get("spec") or {}).get("name") or name
        if component not in rendered_names:
            removed.append(dcd)
        elif rendered_names[component] != name:
            replaced.append(dcd)
    return Stale(removed, replaced)


async def delete_component(
    writer: Writer, store: Store, dcd: Mapping[str, Any], *, event: bool = True
) -> bool:
    """Delete a DCD and the workloads it controls (each with its UID precondition); whether
    the DCD was there to delete. ``event``: a ``Delete<Kind>`` event for the DCD.

    Garbage collection would remove the workloads too; deleting them here makes removal
    immediate and independent of the collector's queue.
    """
    meta = Body(dcd).meta
    uid, namespace = meta.uid, meta.namespace
    # The DCD first, marked deleted (foreground): its own reconcile then stops, and whatever a
    # reconcile that read it just before creates for it goes with it (docs/retries.md).
    gone = await writer.delete(dcd, event=event, foreground=True)
    for kind in WORKLOAD_KINDS:
        for obj in store.list(kind, namespace, owner=uid):
            if controlled_by(obj, uid) and not being_deleted(obj):
                await writer.delete(obj, event=False)
    return gone
