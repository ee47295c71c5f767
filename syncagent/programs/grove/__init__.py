"""The Grove pathway (spec/grove.md)."""

from syncagent.programs.grove.program import GroveProgram

__all__ = ["GroveProgram"]
