"""The apply engine: write only what changes, prove convergence without requests
(docs/write-protocol.md §1).

1. A cache record (desired digest, live resourceVersion) proves convergence: no request.
2. When a write is certain (``certain.py``: the object is absent, our manager has no entry on
   it, or our desired object changed since we converged it), the write itself asks: a
   non-forced apply; on 409 the conflicts are recorded (or yielded, below) and, for a forced
   apply, the apply is forced. One request in the common case.
3. Otherwise a non-forced server-side dry run (a conflict there is reported; for a forced apply
   the write then takes the fields over). The options' ``on_conflict`` may name conflicting
   paths to *yield*: they are left out of the desired object and the apply (or dry run) runs
   again (docs/design.md §9, a fight backs off this way).
4. The dry-run result is compared with the live object (compare.py); equal means no write.
5. Otherwise the real apply; the resulting resourceVersion is recorded.

A write to an object the caller saw carries its UID, so it never re-creates an object that was
deleted meanwhile; a write to an object the caller saw absent is create-only, so it never
writes over one that exists (``certain.targeted``). A create is sent forced: it can take no
field (there is no object), and an object that exists after all then fails the create-only
precondition rather than a field conflict.

Every apply verb takes one :class:`~syncagent.ssa.options.ApplyOptions`. The engine is the
live :class:`~syncagent.ssa.applier.Applier`: it writes. :meth:`Engine.preview` is the
decision's own server-side dry run offered on its own (what the apply would make of an object,
nothing written); it is not a mode. ``syncagent plan`` runs the programs on another applier
(``inspect/planapplier.py``), chosen where the command is put together.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio

from syncagent.ssa.applyplan import ApplyPlan as _Plan
from syncagent.ssa.cache import CacheKey, fingerprint
from syncagent.ssa.certain import is_create_only, targeted, with_uid, write_is_certain
from syncagent.ssa.changeset import ChangeSetEntry
from syncagent.ssa.compare import differences
from syncagent.ssa.desired import check_desired, digest, ref_of, without
from syncagent.ssa.errors import (
    ApplyAllError,
    Conflict,
    ConflictError,
    ExistsError,
    PreconditionError,
    SsaError,
)
from syncagent.ssa.options import ApplyOptions, Live
from syncagent.ssa.verbs import Verbs

# Dry runs one apply may make while yielding paths, before it forces what still conflicts.
_YIELD_ROUNDS = 3


class Engine(Verbs):
    """Server-side apply with dry-run convergence. Knows nothing about what it applies.

    ``client`` is the process's HTTP client (its connection is shared). ``counter`` counts
    every request of that client.
    """

    async def apply(
        self, desired: Mapping[str, Any], options: ApplyOptions, *, live: Live = None
    ) -> ChangeSetEntry:
        """Apply ``desired``; write only when the dry run shows a change.

        ``live`` is the caller's view of the object (a watch-cache entry), ``ABSENT`` when it is
        known not to exist, or None to GET it. A non-forced apply raises ``ConflictError``; a
        forced one returns the conflicts it overrode on the entry.
        """
        plan = self._plan(desired, options)
        await self._prepare(plan, live)
        return await self._finish(plan)

    async def preview(
        self, desired: Mapping[str, Any], options: ApplyOptions, *, live: Live = None
    ) -> ChangeSetEntry:
        """What ``apply`` would do, from server-side dry runs only; never writes, never
        records convergence (``entry.dry_run``)."""
        plan = self._plan(desired, options)
        await self._prepare(plan, live, shortcut=False)
        if plan.result is None:  # absent, or a forced plan that conflicted
            plan.result = await self._dry_run(plan, force=bool(plan.conflicts))
            plan.differences = tuple(self._differences(plan))
        return self._entry(plan, plan.result, dry_run=True)

    async def apply_all(
        self,
        desired: Sequence[Mapping[str, Any]],
        options: ApplyOptions,
        *,
        live: Mapping[str, Live] | None = None,
        concurrency: int = 8,
    ) -> list[ChangeSetEntry]:
        """Dry-run all objects with bounded concurrency, then write in input order.

        ``live`` maps a subject (``Kind/ns/name``) to the caller's view; missing subjects are
        fetched. Objects that fail do not stop the others; an ``ApplyAllError`` then carries
        both the entries and the errors.
        """
        plans = [self._plan(d, options) for d in desired]
        limiter = anyio.CapacityLimiter(max(1, concurrency))

        async def prepare(plan: _Plan) -> None:
            async with limiter:
                try:
                    await self._prepare(plan, (live or {}).get(plan.ref.subject))
                except SsaError as err:
                    plan.error = err

        async with anyio.create_task_group() as group:
            for plan in plans:
                group.start_soon(prepare, plan)
        entries, errors = [], []
        for plan in plans:
            try:
                if plan.error is not None:
                    raise plan.error
                entries.append(await self._finish(plan))
            except SsaError as err:
                errors.append(err)
        if errors:
            raise ApplyAllError(entries, errors)
        return entries

    # -- steps -------------------------------------------------------------------------------

    def _plan(self, desired: Mapping[str, Any], options: ApplyOptions) -> _Plan:
        if not options.manager:
            raise SsaError(ref_of(desired).subject, "a field manager name is required")
        ref = check_desired(
            desired,
            subresource=options.subresource,
            resource_version_precondition=options.resource_version_precondition,
        )
        return _Plan(
            desired=desired,
            ref=ref,
            key=CacheKey.of(ref, manager=options.manager, subresource=options.subresource),
            digest=digest(desired),
            options=options,
        )

    async def _prepare(self, plan: _Plan, live: Live, *, shortcut: bool = True) -> None:
        """Everything up to the decision: live view, cache, dry run, comparison.

        ``shortcut``: when a write is certain, leave the decision to the write (a plan cannot).
        """
        await self.api.resolve_for_write(plan.ref)
        plan.live = await self._live(plan.ref, live)
        if live is None and plan.live is None:
            plan.read = True
            # Our own GET just found nothing: the apply creates, and nobody owns a field yet,
            # so a dry run could neither find a conflict nor a reason not to write.
            return
        rv = _rv(plan.live)
        if plan.live is not None and self.cache.converged(
            plan.key, digest=plan.digest, resource_version=rv, fingerprint=lambda: self._print(plan)
        ):
            plan.converged, plan.result = True, plan.live
            return
        if shortcut and write_is_certain(
            plan.desired,
            plan.live,
            manager=plan.manager,
            subresource=plan.subresource,
            recorded=self.cache.recorded(plan.key),
            digest=plan.digest,
        ):
            plan.certain = True
            return
        plan.result = await self._ask(plan, self._dry_run)
        if plan.result is None:
            return  # a conflict means the forced write changes something: no second dry run
        if _rv(plan.result) != rv:
            # The caller's view was stale (a dry run does not bump resourceVersion, and a
            # dry-run create has none): compare with the object as it is now.
            plan.live = await self.api.get(plan.ref)
        plan.differences = tuple(self._differences(plan))
        plan.converged = not plan.differences

    def _yield(self, plan: _Plan, conflicts: Sequence[Conflict]) -> bool:
        """Leave the paths the caller yields out of the desired object; whether any went."""
        on_conflict = plan.options.on_conflict
        if on_conflict is None:
            return False
        paths = set(on_conflict(conflicts, plan.live)) & {c.path for c in conflicts}
        pruned = without(plan.desired, paths) if paths else plan.desired
        if pruned == plan.desired:
            return False
        plan.desired, plan.digest = pruned, digest(pruned)
        plan.yielded += tuple(c for c in conflicts if c.path in paths)
        return True

    async def _finish(self, plan: _Plan) -> ChangeSetEntry:
        if plan.converged and plan.result is not None:
            self._record(plan, plan.live)
            return self._entry(plan, plan.result)
        if plan.live is None:
            result = await self._create(plan)
        elif plan.certain:
            result = await self._write_asking(plan)
        else:
            result = await self._write(plan, force=plan.options.force)
        self._record(plan, result)
        if plan.certain:
            plan.differences = tuple(self._differences_after_write(plan, result))
            plan.converged = not plan.differences
        return self._entry(plan, result)

    def _print(self, plan: _Plan, obj: Mapping[str, Any] | None = None) -> str:
        target = plan.live if obj is None else obj
        return fingerprint(target, plan.desired, subresource=plan.subresource)

    def _record(self, plan: _Plan, obj: Mapping[str, Any] | None) -> None:
        self.cache.record(
            plan.key,
            digest=plan.digest,
            resource_version=_rv(obj),
            fingerprint=self._print(plan, obj),
            partial=bool(plan.yielded),
        )

    async def _create(self, plan: _Plan) -> dict[str, Any]:
        """A create-only write, forced: nobody owns a field of an object that does not exist.
        Where admission refuses create-only writes (``create_only`` off), read before create."""
        if not self.create_only and is_create_only(plan.desired):
            return await self._create_after_read(plan)
        try:
            return await self._write(plan, force=True)
        except PreconditionError as err:
            if not is_create_only(plan.desired):
                raise  # the caller's own precondition, not the create-only one
            raise _exists(plan, err.code, err.reason) from err

    async def _create_after_read(self, plan: _Plan) -> dict[str, Any]:
        """The fallback create (docs/write-protocol.md §4): a GET, then a non-forced apply with
        no resourceVersion. An object found is refused as the create-only write refuses it; one
        that appears between the two requests and sets a field differently makes the apply
        conflict and is refused too, but one that sets no field of ours differently is written
        to (the weaker guarantee)."""
        if not plan.read and await self.api.get(plan.ref) is not None:
            raise _exists(plan, 409, "AlreadyExists")
        try:
            return await self.api.apply(
                plan.ref,
                plan.desired,
                manager=plan.manager,
                force=False,
                dry_run=False,
                subresource=plan.subresource,
            )
        except ConflictError as err:
            raise _exists(plan, err.code, err.reason) from err

    async def _write_asking(self, plan: _Plan) -> dict[str, Any]:
        """A certain write: non-forced; on 409 record the conflicts (or yield some paths and
        ask again), then force if the options do. Same information as dry run + write, in one
        request when nothing conflicts."""
        result = await self._ask(plan, self._write)
        return result if result is not None else await self._write(plan, force=True)

    async def _ask(
        self, plan: _Plan, send: Callable[..., Awaitable[dict[str, Any]]]
    ) -> dict[str, Any] | None:
        """``send`` non-forced (a dry run or a write); on 409 leave out what the caller yields
        and ask again. Conflicts left: raised for a non-forced apply, else recorded on the plan
        and None returned (the caller forces)."""
        for attempt in range(_YIELD_ROUNDS):
            try:
                return await send(plan, force=False)
            except ConflictError as err:
                if attempt + 1 < _YIELD_ROUNDS and self._yield(plan, err.conflicts):
                    continue
                if not plan.options.force:
                    raise
                plan.conflicts = err.conflicts
                return None
        return None

    async def _write(self, plan: _Plan, *, force: bool) -> dict[str, Any]:
        return await self.api.apply(
            plan.ref,
            targeted(plan.desired, plan.live),
            manager=plan.manager,
            force=force,
            dry_run=False,
            subresource=plan.subresource,
        )

    def _differences_after_write(self, plan: _Plan, result: dict[str, Any]) -> list[str]:
        if plan.live is None:
            return ["(object does not exist)"]
        if _rv(result) == _rv(plan.live):
            return []  # the server found nothing to change and stored nothing
        return differences(
            plan.live, result, manager=plan.manager, subresource=plan.subresource
        ) or ["managedFields"]

    async def _dry_run(self, plan: _Plan, *, force: bool) -> dict[str, Any]:
        return await self.api.apply(
            plan.ref,
            with_uid(plan.desired, plan.live),
            manager=plan.manager,
            force=force,
            dry_run=True,
            subresource=plan.subresource,
        )

    def _differences(self, plan: _Plan) -> list[str]:
        if plan.live is None or plan.result is None:
            return ["(object does not exist)"]
        return differences(
            plan.live, plan.result, manager=plan.manager, subresource=plan.subresource
        )

    def _entry(
        self, plan: _Plan, result: dict[str, Any], *, dry_run: bool = False
    ) -> ChangeSetEntry:
        if plan.converged:
            action = "unchanged"
        elif plan.live is None:
            action = "created"
        else:
            action = "configured"
        return ChangeSetEntry(
            action=action,
            subject=plan.ref.subject,
            object=result,
            manager=plan.manager,
            subresource=plan.subresource,
            before=plan.live,
            conflicts=plan.conflicts,
            yielded=plan.yielded,
            differences=plan.differences,
            dry_run=dry_run,
        )


def _exists(plan: _Plan, code: int, reason: str) -> ExistsError:
    return ExistsError(
        plan.ref.subject,
        "exists, though this write was a create (the object was not seen); nothing was "
        "written: read it and decide again",
        code=code,
        reason=reason,
    )


def _rv(obj: Mapping[str, Any] | None) -> str:
    if not obj:
        return ""
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
