"""A resource type of the API server: where it is served and what it holds."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True, slots=True)
class Resource:
    """``group``/``version``/``plural`` address it (its identity: two Resources naming the same
    URL are equal); ``kind`` and ``namespaced`` describe what it serves. ``str()`` is the kind,
    as messages name it (``Deployment/ns/name``)."""

    group: str
    version: str
    kind: str = field(compare=False)
    plural: str
    namespaced: bool = field(default=True, compare=False)

    @classmethod
    def of(cls, api_version: str, kind: str, plural: str, *, namespaced: bool = True) -> Resource:
        """From a manifest's ``apiVersion`` (``apps/v1``, or ``v1`` for the core group)."""
        group, _, version = api_version.rpartition("/")
        return cls(group, version, kind, plural, namespaced)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def gvr(self) -> str:
        """``apiVersion plural`` (``apps/v1 deployments``), as messages name a served resource."""
        return f"{self.api_version} {self.plural}"

    def __str__(self) -> str:
        return self.kind
