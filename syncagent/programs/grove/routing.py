"""How a graph comes to the Grove pathway (docs/routing.md §2). Pure."""

from __future__ import annotations

from syncagent.render.labels import ENABLE_GROVE

PATHWAY = "Grove"
# Added to ``WorkloadPathway`` while the routed-graph exception holds a graph back from Grove.
HELD_BACK = f'Grove is available: set {ENABLE_GROVE}: "true" to move this graph to it'

__all__ = ["ENABLE_GROVE", "HELD_BACK", "PATHWAY"]
