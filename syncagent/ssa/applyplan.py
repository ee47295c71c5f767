"""One apply in progress: what the engine knows about it between its steps (engine.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from syncagent.kube.objects import ObjectRef
from syncagent.ssa.cache import CacheKey
from syncagent.ssa.errors import Conflict, SsaError
from syncagent.ssa.options import ApplyOptions


@dataclass
class ApplyPlan:
    desired: Mapping[str, Any]
    ref: ObjectRef
    key: CacheKey
    digest: str
    options: ApplyOptions
    live: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    conflicts: tuple[Conflict, ...] = ()
    yielded: tuple[Conflict, ...] = ()
    differences: tuple[str, ...] = ()
    converged: bool = False
    certain: bool = False  # the write decides (no dry run): see certain.py
    read: bool = False  # the engine's own GET found the object absent just now
    error: SsaError | None = field(default=None, repr=False)

    @property
    def manager(self) -> str:
        return self.options.manager

    @property
    def subresource(self) -> str:
        return self.options.subresource
