"""The Grove pathway (docs/grove.md)."""

from syncagent.programs.grove.program import grove_program

__all__ = ["grove_program"]
