"""The Component pathway (docs/routing.md)."""

from syncagent.programs.component.program import component_program

__all__ = ["component_program"]
