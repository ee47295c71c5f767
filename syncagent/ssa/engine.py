"""The apply engine: write only what changes, prove convergence without requests (design §4.2).

1. A cache record (desired digest, live resourceVersion) proves convergence: no request.
2. Otherwise a non-forced server-side dry run (a conflict there is reported; for a forced apply
   the write then takes the fields over). Skipped when the engine's own GET found no object.
   A caller's ``on_conflict`` may name conflicting paths to *yield*: they are left out of the
   desired object and the dry run runs again (design §4.4, a fight backs off this way).
3. The dry-run result is compared with the live object (compare.py); equal means no write.
4. Otherwise the real apply; the resulting resourceVersion is recorded.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from syncagent.ssa.api import KubeApi
from syncagent.ssa.cache import CacheKey, ConvergenceCache
from syncagent.ssa.changeset import ChangeSetEntry
from syncagent.ssa.compare import differences
from syncagent.ssa.counter import RequestCounter
from syncagent.ssa.desired import ObjectRef, check_desired, digest, ref_of, without
from syncagent.ssa.errors import Conflict, ConflictError, SsaError

# Given the conflicts of a non-forced dry run and the live object, the paths to leave out.
OnConflict = Callable[[Sequence[Conflict], Mapping[str, Any] | None], Collection[str]]
# Dry runs one apply may make while yielding paths, before it forces what still conflicts.
_YIELD_ROUNDS = 3


class Absent(enum.Enum):
    """Marker for "the caller knows the object does not exist" (skips the GET)."""

    ABSENT = "absent"


class TypedObject(Protocol):
    """A typed client object (lightkube models); raw dicts compare more faithfully."""

    def to_dict(self) -> dict[str, Any]: ...


ABSENT = Absent.ABSENT
Live = Mapping[str, Any] | TypedObject | Absent | None


@dataclass
class _Plan:
    desired: Mapping[str, Any]
    ref: ObjectRef
    key: CacheKey
    digest: str
    manager: str
    force: bool
    subresource: str
    live: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    conflicts: tuple[Conflict, ...] = ()
    yielded: tuple[Conflict, ...] = ()
    on_conflict: OnConflict | None = None
    differences: tuple[str, ...] = ()
    converged: bool = False
    error: SsaError | None = field(default=None, repr=False)


class ApplyAllError(SsaError):
    """Some objects of an ``apply_all`` failed; the others were applied."""

    def __init__(self, entries: list[ChangeSetEntry], errors: list[SsaError]) -> None:
        super().__init__(errors[0].subject, "; ".join(str(e) for e in errors))
        self.entries = entries
        self.errors = errors


class Engine:
    """Server-side apply with dry-run convergence. Knows nothing about what it applies.

    ``client`` is a lightkube ``AsyncClient`` (its HTTP connection is shared). ``counter``
    counts every request of that client.
    """

    def __init__(
        self,
        client: Any,
        *,
        cache: ConvergenceCache | None = None,
        counter: RequestCounter | None = None,
    ) -> None:
        self.api = KubeApi(client)
        self.cache = cache if cache is not None else ConvergenceCache()
        self.counter = (counter or RequestCounter()).attach(self.api.http)

    async def apply(
        self,
        desired: Mapping[str, Any],
        *,
        manager: str,
        force: bool = False,
        live: Live = None,
        subresource: str | None = None,
        resource_version_precondition: bool = False,
        on_conflict: OnConflict | None = None,
    ) -> ChangeSetEntry:
        """Apply ``desired`` under ``manager``; write only when the dry run shows a change.

        ``live`` is the caller's view of the object (a watch-cache entry), ``ABSENT`` when it is
        known not to exist, or None to GET it. A non-forced apply raises ``ConflictError``; a
        forced one returns the conflicts it overrode on the entry. ``on_conflict`` names the
        conflicting paths to leave to their owner instead (``entry.yielded``).
        """
        plan = self._plan(desired, manager, force, subresource, resource_version_precondition)
        plan.on_conflict = on_conflict
        await self._prepare(plan, live)
        return await self._finish(plan)

    async def plan(
        self,
        desired: Mapping[str, Any],
        *,
        manager: str,
        force: bool = False,
        live: Live = None,
        subresource: str | None = None,
        resource_version_precondition: bool = False,
        on_conflict: OnConflict | None = None,
    ) -> ChangeSetEntry:
        """What ``apply`` would do, from dry runs only; never writes (``entry.dry_run``)."""
        plan = self._plan(desired, manager, force, subresource, resource_version_precondition)
        plan.on_conflict = on_conflict
        await self._prepare(plan, live)
        if plan.result is None:  # absent, or a forced plan that conflicted
            plan.result = await self._dry_run(plan, force=bool(plan.conflicts))
            plan.differences = tuple(self._differences(plan))
        return self._entry(plan, plan.result, dry_run=True)

    async def apply_all(
        self,
        desired: Sequence[Mapping[str, Any]],
        *,
        manager: str,
        force: bool = False,
        live: Mapping[str, Live] | None = None,
        subresource: str | None = None,
        concurrency: int = 8,
    ) -> list[ChangeSetEntry]:
        """Dry-run all objects with bounded concurrency, then write in input order.

        ``live`` maps a subject (``Kind/ns/name``) to the caller's view; missing subjects are
        fetched. Objects that fail do not stop the others; an ``ApplyAllError`` then carries
        both the entries and the errors.
        """
        plans = [self._plan(d, manager, force, subresource, False) for d in desired]
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

    async def get(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any] | None:
        """The live object named by ``obj`` (any object with apiVersion, kind and metadata)."""
        return await self.api.get(ref_of(obj), subresource=subresource)

    async def live_view(self, obj: Mapping[str, Any], live: Live = None) -> dict[str, Any] | None:
        """The caller's view as a plain dict: None for ``ABSENT``, ``get`` when ``live`` is None."""
        if live is None:
            return await self.get(obj)
        return await self._live(ref_of(obj), live)

    async def delete(
        self,
        obj: Mapping[str, Any],
        *,
        uid: str,
        resource_version: str | None = None,
        propagation: str = "Background",
    ) -> bool:
        """Delete the object only if it still has ``uid`` (and ``resource_version``, if given).

        Returns False when it was already gone; raises ``PreconditionError`` when the object
        was replaced or changed.
        """
        if not uid:
            raise SsaError(ref_of(obj).subject, "delete needs the UID of the object to delete")
        ref = ref_of(obj)
        self.cache.forget(ref)
        return await self.api.delete(
            ref, uid=uid, resource_version=resource_version, propagation=propagation
        )

    # -- steps -------------------------------------------------------------------------------

    def _plan(
        self,
        desired: Mapping[str, Any],
        manager: str,
        force: bool,
        subresource: str | None,
        rv_precondition: bool,
    ) -> _Plan:
        subresource = subresource or ""
        if not manager:
            raise SsaError(ref_of(desired).subject, "a field manager name is required")
        ref = check_desired(
            desired, subresource=subresource, resource_version_precondition=rv_precondition
        )
        return _Plan(
            desired=desired,
            ref=ref,
            key=CacheKey.of(ref, manager=manager, subresource=subresource),
            digest=digest(desired),
            manager=manager,
            force=force,
            subresource=subresource,
        )

    async def _prepare(self, plan: _Plan, live: Live) -> None:
        """Everything up to the decision: live view, cache, dry run, comparison."""
        await self.api.resolve(plan.ref)
        plan.live = await self._live(plan.ref, live)
        if live is None and plan.live is None:
            # Our own GET just found nothing: the apply creates, and nobody owns a field yet,
            # so a dry run could neither find a conflict nor a reason not to write.
            return
        rv = _rv(plan.live)
        if plan.live is not None and self.cache.converged(
            plan.key, digest=plan.digest, resource_version=rv
        ):
            plan.converged, plan.result = True, plan.live
            return
        for attempt in range(_YIELD_ROUNDS):
            try:
                plan.result = await self._dry_run(plan, force=False)
                break
            except ConflictError as err:
                if attempt + 1 < _YIELD_ROUNDS and self._yield(plan, err.conflicts):
                    continue
                if not plan.force:
                    raise
                # A conflict means the forced write changes something: no second dry run.
                plan.conflicts = err.conflicts
                return
        if _rv(plan.result) != rv:
            # The caller's view was stale (a dry run does not bump resourceVersion, and a
            # dry-run create has none): compare with the object as it is now.
            plan.live = await self.api.get(plan.ref)
        plan.differences = tuple(self._differences(plan))
        plan.converged = not plan.differences

    def _yield(self, plan: _Plan, conflicts: Sequence[Conflict]) -> bool:
        """Leave the paths the caller yields out of the desired object; whether any went."""
        if plan.on_conflict is None:
            return False
        paths = set(plan.on_conflict(conflicts, plan.live)) & {c.path for c in conflicts}
        pruned = without(plan.desired, paths) if paths else plan.desired
        if pruned == plan.desired:
            return False
        plan.desired, plan.digest = pruned, digest(pruned)
        plan.yielded += tuple(c for c in conflicts if c.path in paths)
        return True

    async def _finish(self, plan: _Plan) -> ChangeSetEntry:
        if plan.converged and plan.result is not None:
            self.cache.record(plan.key, digest=plan.digest, resource_version=_rv(plan.live))
            return self._entry(plan, plan.result)
        result = await self.api.apply(
            plan.ref,
            plan.desired,
            manager=plan.manager,
            force=plan.force,
            dry_run=False,
            subresource=plan.subresource,
        )
        self.cache.record(plan.key, digest=plan.digest, resource_version=_rv(result))
        return self._entry(plan, result)

    async def _dry_run(self, plan: _Plan, *, force: bool) -> dict[str, Any]:
        return await self.api.apply(
            plan.ref,
            plan.desired,
            manager=plan.manager,
            force=force,
            dry_run=True,
            subresource=plan.subresource,
        )

    async def _live(self, ref: ObjectRef, live: Live) -> dict[str, Any] | None:
        if live is ABSENT:
            return None
        if live is None:
            return await self.api.get(ref)
        if isinstance(live, Mapping):
            return dict(live)
        return live.to_dict()

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


def _rv(obj: Mapping[str, Any] | None) -> str:
    if not obj:
        return ""
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
