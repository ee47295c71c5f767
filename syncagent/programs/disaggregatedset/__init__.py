"""The DisaggregatedSet pathway (docs/disaggregatedset.md)."""

from syncagent.programs.disaggregatedset.program import disaggregatedset_program

__all__ = ["disaggregatedset_program"]
