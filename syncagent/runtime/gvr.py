"""The name of a served resource, as API discovery reports it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class GroupVersionResource:
    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        return f"{self.group}/{self.version} {self.resource}"
