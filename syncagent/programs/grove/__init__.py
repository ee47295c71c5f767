"""The Grove pathway (docs/grove.md)."""

from syncagent.programs.grove.program import GroveProgram

__all__ = ["GroveProgram"]
