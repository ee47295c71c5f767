"""The DisaggregatedSet template hash ``F``, remembered (docs/disaggregatedset.md §4 "Caching").

``F`` is computed from the templates as the API server defaults them (a dry-run apply); the
same desired DS gives the same ``F``, so it is kept under the digest of the desired DS without
``F``. The program owns one :class:`TemplateHashes`, so it lives as long as the agent's registry.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from syncagent.programs.disaggregatedset import field_managers as ds_manager
from syncagent.programs.disaggregatedset.render import DsRender, template_hash
from syncagent.ssa import ABSENT, ApplyOptions, digest

if TYPE_CHECKING:
    from syncagent.programs.view import Obj
    from syncagent.programs.writes import Writer

SIZE = 4096


class TemplateHashes:
    """``F`` by desired-DS digest, the least recently used dropped beyond ``size``."""

    def __init__(self, *, size: int = SIZE) -> None:
        self._size = size
        self._by_digest: OrderedDict[str, str] = OrderedDict()

    async def of(self, writer: Writer, out: DsRender, *, live: Obj | None) -> str:
        """``F`` of ``out``: remembered, else from a dry-run apply over ``live``."""
        key = digest(out.rendered.body)
        cached = self._by_digest.get(key)
        if cached is not None:
            self._by_digest.move_to_end(key)
            return cached
        entry = await writer.applier.preview(
            out.rendered.manifest(),
            ApplyOptions(manager=ds_manager.MANAGER.name, force=True),
            live=live if live is not None else ABSENT,
        )
        value = template_hash((entry.object.get("spec") or {}).get("roles") or [])
        self._by_digest[key] = value
        while len(self._by_digest) > self._size:
            self._by_digest.popitem(last=False)
        return value
