"""Writes of owned objects: the ownership protocol, refusals, counting and event material.

Every object a program owns goes through :meth:`Writer.apply_owned` (docs/write-protocol.md
§3) and every delete through :meth:`Writer.delete` (UID precondition). The writer never
decides *what* to write; it records what happened for metrics, logs and events: a forced
conflict becomes a ``ForcedConflict`` event (docs/design.md §9), and with a fight detector, fields
another manager keeps taking back are yielded for a backoff (docs/ownership.md).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fieldmanagers import FieldManager, metric_label
from syncagent.kube.objects import Body
from syncagent.programs.base import WARNING, QueuedEvent, write_event
from syncagent.programs.fights import Fights
from syncagent.programs.ownership import SCHEME
from syncagent.programs.upstream_takeover import PREFIX as TAKEOVER_PREFIX
from syncagent.programs.upstream_takeover import targets_for
from syncagent.programs.writemetrics import ApplyMetrics
from syncagent.render import PLACEHOLDER_UID, Rendered
from syncagent.rest.request import JSON_PATCH
from syncagent.runtime.metrics import Metrics
from syncagent.ssa import (
    ABSENT,
    ApplyOptions,
    ChangeSetEntry,
    Conflict,
    OnConflict,
    OwnerRef,
    OwnershipError,
    SsaError,
    apply_controlled,
    control_refusal,
    ref_of,
    set_controller,
)
from syncagent.ssa.applier import Applier
from syncagent.ssa.takeover import TakeoverPolicy, needs_takeover, take_over

log = logging.getLogger(__name__)


class RefusedError(OwnershipError):
    """The object is controlled by someone else (or not adoptable): nothing was written.

    ``str()`` starts with the object's ``Kind/namespace/name`` (logs, exceptions);
    ``message`` is the documented refusal text for conditions and events (docs/lifecycle.md §4).
    """

    @property
    def message(self) -> str:
        return self.detail


def refused(kind: str, namespace: str, name: str, *, owner: OwnerRef) -> RefusedError:
    """The refusal of docs/routing.md §3: ``refusing to reconcile <Kind> <name> because ...``."""
    return RefusedError(
        f"{kind}/{namespace}/{name}",
        f"refusing to reconcile {kind} {name} because it is not controlled by "
        f"{owner.kind} {namespace}/{owner.name}",
    )


@dataclass
class Writer:
    """Applies and deletes for one reconcile; collects the events those writes raise."""

    applier: Applier
    # What a takeover moves from the upstream operator's entries (``Registry.takeover_policy``,
    # passed in: the pathways' own content managers are the registry's).
    takeover: TakeoverPolicy = field(kw_only=True)
    metrics: Metrics | None = None
    events: list[QueuedEvent] = field(default_factory=list)
    on: Mapping[str, Any] | None = None  # the object write events are about (None = the DGD)
    fights: Fights | None = None  # None: every conflict is forced (plan, tests)
    # The agent's field managers (``Registry.field_managers``): with ``metrics``, a conflict
    # with one of them is counted under its own name (``fieldmanagers.metric_label``).
    managers: tuple[FieldManager, ...] = ()
    graph: Mapping[str, Any] | None = None  # the object fights are reported on
    # When the earliest backoff of a yielded field ends: reconcile again then to reclaim it.
    requeue_after: float | None = None
    # Owners read from the server this reconcile and found alive (by UID).
    _live_owners: set[str] = field(default_factory=set)

    def check_may_control(
        self, rendered: Rendered, live: Mapping[str, Any] | None, owner: OwnerRef
    ) -> None:
        """Raise :class:`RefusedError` unless ``live`` is absent, ours, or adoptable."""
        if live is not None and control_refusal(live, owner, scheme=SCHEME) is not None:
            raise refused(rendered.kind, rendered.namespace, rendered.name, owner=owner)

    async def apply_owned(
        self,
        rendered: Rendered,
        *,
        owner: OwnerRef,
        live: Mapping[str, Any] | None,
        known: bool = False,
    ) -> ChangeSetEntry:
        """Create or update ``rendered`` controlled by ``owner``; returns the content entry.

        ``live`` comes from a watch cache; ``known=False`` means the cache cannot tell (the
        applier then reads the object). A ``rendered.shared`` object keeps the co-owned create
        protocol (``apply_controlled``).
        A write to an object ``live`` shows carries its UID, so when the object vanished
        meanwhile (garbage collection of its owner, a user) the write fails instead of
        re-creating it without its owner reference; the next reconcile decides again.
        """
        self.check_may_control(rendered, live, owner)
        if live is None:
            await self.confirm_owner(owner, rendered)
        live = await self.take_over(live, manager=rendered.manager)
        try:
            options = ApplyOptions(
                manager=rendered.manager,
                force=True,
                on_conflict=self.on_conflict(rendered.kind, rendered.manager),
            )
            entries = await apply_controlled(
                self.applier,
                rendered.manifest(),
                options,
                controller=owner,
                scheme=SCHEME,
                live=_live_arg(live, known=known),
                shared=rendered.shared,
            )
        except SsaError as err:
            self._count(rendered.kind, "error")
            raise err
        content = next(e for e in entries if e.manager == rendered.manager)
        for entry in entries:
            self._record(rendered.kind, entry)
        if _visible(content):
            self.events.append(
                write_event(content.action, rendered.kind, rendered.name, on=self.on)
            )
        return content

    async def confirm_owner(self, owner: OwnerRef, rendered: Rendered) -> None:
        """Before a create, read the owner from the server: a reconcile works from watch caches,
        which still hold an owner for a moment after it was deleted (by this agent, a user, or
        garbage collection), and an object created for it then would run a workload nobody
        owns until garbage collection catches up. One GET per owner and reconcile, on creates
        only: a converged reconcile creates nothing and reads nothing here."""
        if owner.uid in (*self._live_owners, "", PLACEHOLDER_UID):
            return  # a placeholder owner does not exist yet
        stub = {
            "apiVersion": owner.api_version,
            "kind": owner.kind,
            "metadata": {"name": owner.name, "namespace": rendered.namespace},
        }
        if not await self.applier.owner_alive(stub, uid=owner.uid):
            self._count(rendered.kind, "error")
            raise SsaError(
                f"{rendered.kind}/{rendered.namespace}/{rendered.name}",
                f"not created: its owner {owner.kind}/{rendered.namespace}/{owner.name} "
                f"(uid {owner.uid}) is gone or being deleted; nothing to do",
            )
        self._live_owners.add(owner.uid)

    async def take_over(
        self, live: Mapping[str, Any] | None, *, manager: str
    ) -> Mapping[str, Any] | None:
        """Merge what the upstream Dynamo operator wrote into our managers (one guarded
        update), so fields we no longer set do not linger (``programs/upstream_takeover.py``). Nothing
        any other writer added is taken. Runs after the control check and before any adoption
        or handoff; a no-op, without requests, when there is nothing to take.
        """
        if live is None or not needs_takeover(live, policy=self.takeover):
            return live
        result = await take_over(
            self.applier, live, **targets_for(str(live.get("kind")), manager, policy=self.takeover)
        )
        log.info(
            f"{ref_of(live).subject}: took over field ownership",
            extra={"object": ref_of(live).subject},
        )
        return result.object

    async def set_controller(
        self, live: Mapping[str, Any], *, controller: OwnerRef, manager: str
    ) -> dict[str, Any]:
        """Hand control of ``live`` to ``controller`` in one ownership apply (after takeover)."""
        live = await self.take_over(live, manager=manager) or live
        entry = await set_controller(
            self.applier, live, controller=controller, scheme=SCHEME, live=live
        )
        return entry.object

    async def apply(
        self, desired: Mapping[str, Any], options: ApplyOptions, *, live: Mapping[str, Any] | None
    ) -> ChangeSetEntry:
        """A plain apply (content, status, co-owner items): counted, no write event. A forced
        content apply backs off fought-over fields (the fight detector's hook)."""
        kind = str(desired.get("kind"))
        if options.force and not options.subresource:
            options = options.but(on_conflict=self.on_conflict(kind, options.manager))
        try:
            entry = await self.applier.apply(desired, options, live=live)
        except SsaError:
            self._count(kind, "error")
            raise
        self._record(kind, entry)
        return entry

    async def merge_patch(
        self, obj: Mapping[str, Any], patch: Mapping[str, Any], *, manager: str, subresource: str
    ) -> dict[str, Any]:
        """A JSON merge patch where server-side apply cannot write (a custom resource's
        ``/scale``): counted and logged like every write, no write event."""
        kind = str(obj.get("kind"))
        try:
            result = await self.applier.patch(obj, patch, manager=manager, subresource=subresource)
        except SsaError:
            self._count(kind, "error")
            raise
        self._count(kind, "configured")
        subject = f"{kind}/{Body(obj).meta.namespace}/{Body(obj).meta.name}"
        log.info("patched", extra={"object": subject, "manager": manager})
        return result

    async def delete(
        self, obj: Mapping[str, Any], *, event: bool = True, foreground: bool = False
    ) -> bool:
        """Delete ``obj`` (a live object) if it still has its UID; queue ``Delete<Kind>``.
        ``foreground``: the object stays, marked deleted, until garbage collection removed
        everything it owns, including what a reconcile still working from a stale cache
        creates for it meanwhile (docs/retries.md)."""
        meta = Body(obj).meta
        await self.release_operator_finalizers(obj)
        propagation = "Foreground" if foreground else "Background"
        gone = await self.applier.delete(obj, uid=meta.uid, propagation=propagation)
        kind = str(obj.get("kind"))
        self._count(kind, "deleted")
        subject = f"{kind}/{meta.namespace}/{meta.name}"
        log.info(f"{subject}: deleted", extra={"object": subject})
        if gone and event:
            self.events.append(write_event("deleted", kind, meta.name, on=self.on))
        return gone

    async def release_operator_finalizers(self, obj: Mapping[str, Any]) -> None:
        """Upstream's operator's finalizers (``nvidia.com/``) go before the object does: the
        takeover rule removes them from what the agent applies (docs/ownership.md), and an
        object it deletes without applying (a worker DCD of upstream's name), or a graph the
        operator served being deleted, would otherwise wait for ever for a stopped operator. A JSON patch that tests the UID and the list, so
        it removes nothing from another object or from a list someone changed meanwhile."""
        metadata = obj.get("metadata") or {}
        finalizers = list(metadata.get("finalizers") or [])
        kept = [f for f in finalizers if not f.startswith(TAKEOVER_PREFIX)]
        if kept == finalizers:
            return
        patch = [
            {"op": "test", "path": "/metadata/uid", "value": metadata.get("uid")},
            {"op": "test", "path": "/metadata/finalizers", "value": finalizers},
            {"op": "replace", "path": "/metadata/finalizers", "value": kept},
        ]
        await self.applier.patch(obj, patch, manager=SCHEME.controller, content_type=JSON_PATCH)

    def on_conflict(self, kind: str, manager: str) -> OnConflict | None:
        """The applier's hook for a content apply: the paths the fight detector yields."""
        fights = self.fights
        if fights is None:
            return None

        def decide(conflicts: Any, live: Mapping[str, Any] | None) -> frozenset[str]:
            if live is None:  # a conflict needs an object; nothing to judge without one
                return frozenset()
            verdict = fights.judge(
                ref_of(live).subject,
                kind=kind,
                manager=manager,
                conflicts=conflicts,
                live=live,
                graph=self.graph,
            )
            if verdict.requeue_after is not None:
                self.requeue_after = min(
                    verdict.requeue_after, self.requeue_after or verdict.requeue_after
                )
            return verdict.yielded

        return decide

    def _record(self, kind: str, entry: ChangeSetEntry) -> None:
        self._count(kind, entry.action)
        if entry.changed:
            log.info(
                "applied",
                extra={"object": entry.subject, "action": entry.action, "manager": entry.manager},
            )
        for conflict in entry.conflicts:
            if self.metrics is not None:
                label = metric_label(conflict.manager, ours=self.managers)
                self.metrics.of(ApplyMetrics).conflicts.inc(kind=kind, manager=label)
            log.warning(
                "apply conflict overridden",
                extra={"object": entry.subject, "conflict": conflict.describe()},
            )
        if entry.conflicts:
            self.events.append(forced_event(entry, on=self.on))
            if self.fights is not None:
                self.fights.forced(entry.subject, entry.conflicts)
        for conflict in entry.yielded:
            if self.metrics is not None:
                label = metric_label(conflict.manager, ours=self.managers)
                self.metrics.of(ApplyMetrics).yielded.inc(kind=kind, manager=label)
            log.info(
                "field left to another manager during a fight",
                extra={"object": entry.subject, "conflict": conflict.describe()},
            )

    def _count(self, kind: str, result: str) -> None:
        if self.metrics is not None:
            self.metrics.of(ApplyMetrics).apply_actions.inc(kind=kind, result=result)


def forced_event(entry: ChangeSetEntry, *, on: Mapping[str, Any] | None) -> QueuedEvent:
    """``ForcedConflict``: the fields a forced apply took from other managers, by manager."""
    by_manager: dict[str, list[Conflict]] = {}
    for conflict in entry.conflicts:
        by_manager.setdefault(conflict.manager, []).append(conflict)
    parts = [
        f"{', '.join(c.path for c in found)} from {manager!r}"
        for manager, found in by_manager.items()
    ]
    return QueuedEvent(
        WARNING,
        "ForcedConflict",
        f"{entry.subject}: {entry.manager} took {'; '.join(parts)} (the graph sets these "
        "fields; leave them out of the graph, or stop the other writer, to keep its value)",
        on,
    )


def _visible(entry: ChangeSetEntry) -> bool:
    """A write users would call a change: a create, or content beyond field ownership (the
    apply after a create that hands the reference to ``syncagent/ownership`` is not one)."""
    if entry.action == "created":
        return True
    return entry.changed and any(not d.startswith("managedFields") for d in entry.differences)


def _live_arg(live: Mapping[str, Any] | None, *, known: bool) -> Any:
    if live is not None:
        return live
    return ABSENT if known else None
