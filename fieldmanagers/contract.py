"""The shape every field-manager declaration takes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class FieldManager:
    """One concern's field manager: its name, what it writes and which paths it owns.

    ``paths`` use the readable form that ``syncagent blame`` prints (``.spec.replicas``,
    ``.metadata.labels``); a trailing ``*`` means "this path and everything below it".
    """

    name: str
    kinds: tuple[str, ...]
    paths: tuple[str, ...]
    subresource: str = ""
    operation: str = "Apply"
    notes: str = ""
    exempt_from_checks: bool = field(default=False)

    def owns(self, path: str) -> bool:
        """Whether ``path`` lies inside one of this manager's declared paths."""
        return any(_covers(declared, path) for declared in self.paths)


def _covers(declared: str, path: str) -> bool:
    if declared.endswith("*"):
        return path.startswith(declared[:-1])
    return path == declared or path.startswith(declared + ".") or path.startswith(declared + "[")
