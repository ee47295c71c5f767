"""The DisaggregatedSet pathway (docs/disaggregatedset.md)."""

from syncagent.programs.disaggregatedset.program import DisaggregatedSetProgram

__all__ = ["DisaggregatedSetProgram"]
