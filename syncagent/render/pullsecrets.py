"""Image pull Secret discovery (docs/rendering.md §2; the matching rule is our design)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from syncagent.render.inputs import PullSecret

DOCKER_HUB = "docker.io"
_DOCKER_HUB_ALIASES = frozenset({"index.docker.io", "registry-1.docker.io", "docker.io"})


def image_registry(image: str) -> str:
    """The registry host of an image reference; ``docker.io`` when the image names none."""
    first, sep, _ = image.partition("/")
    if not sep or ("." not in first and ":" not in first and first != "localhost"):
        return DOCKER_HUB
    return _canonical(first)


def registry_hosts(auths: Mapping[str, Any]) -> frozenset[str]:
    """Registry hosts named by the ``auths`` keys of a ``.dockerconfigjson``.

    Keys may be bare hosts or URLs (``https://index.docker.io/v1/``).
    """
    hosts = set()
    for key in auths:
        host = key.split("://", 1)[-1].split("/", 1)[0]
        if host:
            hosts.add(_canonical(host))
    return frozenset(hosts)


def _canonical(host: str) -> str:
    host = host.lower()
    return DOCKER_HUB if host in _DOCKER_HUB_ALIASES else host


def pull_secret_refs(
    user: list[dict[str, Any]], images: Iterable[str], secrets: Iterable[PullSecret]
) -> list[dict[str, Any]]:
    """User entries first, then matching discovered Secrets sorted by name, no duplicates."""
    wanted = {image_registry(i) for i in images if i}
    names = {ref.get("name") for ref in user}
    found = sorted(s.name for s in secrets if s.registries & wanted and s.name not in names)
    return [*user, *({"name": n} for n in dict.fromkeys(found))]
