"""The Component pathway (docs/routing.md)."""

from syncagent.programs.component.program import ComponentProgram

__all__ = ["ComponentProgram"]
