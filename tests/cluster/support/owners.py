"""Owners and owned objects for the SSA ownership tests (no tests here).

Owners are ConfigMaps (any object with a UID can own); the ownership scheme is the agent's.
"""

from __future__ import annotations

from typing import Any

from fieldmanagers import services
from syncagent.programs.ownership import SCHEME
from syncagent.ssa import (
    ApplyOptions,
    ChangeSetEntry,
    Engine,
    OwnerRef,
    apply_controlled,
    join,
    managedfields,
    owner_of,
)
from syncagent.ssa.paths import Field
from tests.cluster.support.objects import configmap

REFS = (Field("metadata"), Field("ownerReferences"))


async def owners(engine: Engine, namespace: str, *names: str) -> list[OwnerRef]:
    """One live owner per name."""
    refs = []
    for name in names:
        entry = await engine.apply(configmap(namespace, name), ApplyOptions(manager="test-owners"))
        refs.append(owner_of(entry.object))
    return refs


def holders(live: dict[str, Any]) -> set[str]:
    """The managers holding any of ``live``'s owner reference items."""
    return managedfields.managers_under(live, REFS)


async def create_controlled(
    engine: Engine,
    desired: dict[str, Any],
    *,
    manager: str,
    controller: OwnerRef,
    shared: bool = False,
    live: dict[str, Any] | None = None,
) -> list[ChangeSetEntry]:
    """``desired`` created (or adopted) under ``controller``, as a program writes it; ``live``
    is the caller's view of the object (the engine reads it when None)."""
    return await apply_controlled(
        engine,
        desired,
        ApplyOptions(manager=manager, force=True),
        controller=controller,
        scheme=SCHEME,
        shared=shared,
        live=live,
    )


async def co_own(engine: Engine, desired: dict[str, Any], *, first: OwnerRef, second: OwnerRef):
    """``desired`` (a shared model Service) created under ``first``, then joined by both owners
    in turn, each re-applying the same content first, as two graphs sharing it do."""
    content = services.MANAGER.name
    await create_controlled(engine, desired, manager=content, controller=first, shared=True)
    await join(engine, desired, owner=first, scheme=SCHEME)
    await engine.apply(desired, ApplyOptions(manager=content))
    await join(engine, desired, owner=second, scheme=SCHEME)
