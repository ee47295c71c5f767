"""Which distributed executor a multinode vLLM component launches with: ``mp`` or Ray.

Upstream's order: the pod-template annotation ``nvidia.com/vllm-distributed-executor-backend``
(``mp``/``ray``, any case; another value is ignored), then the operator-origin gate: graphs
first created by operator >= 1.0.0 (``nvidia.com/dynamo-operator-origin-version``) use ``mp``,
older ones and unparsable versions keep Ray. Upstream also gives Ray to anything without the
annotation. Its webhook stamps every graph it creates, so there that means a graph older than
the stamp; we stamp nothing, so a graph without an origin version is a new graph and gets
``mp`` (our design, docs/multinode.md), unless upstream's operator served it (its worker
generation is recorded): its pods run Ray, and a takeover must not roll them. Upstream never
stamps a standalone DCD: without an origin version in its pod template it keeps Ray, as upstream.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from syncagent.render import labels as L

MP = "mp"
RAY = "ray"
MP_MIN_ORIGIN = (1, 0, 0)

# Masterminds/semver v3 NewVersion (coercing): optional "v", one to three numeric segments,
# then an optional pre-release and build metadata.
_SEMVER = re.compile(
    r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
    re.ASCII,
)
_UINT64 = 2**64


def uses_mp(
    annotations: Mapping[str, str], *, graph_owned: bool, upstream_served: bool = False
) -> bool:
    """``annotations``: the pod template's, with the graph's origin version when it has one;
    ``upstream_served``: the component carries a worker hash upstream's operator recorded."""
    override = annotations.get(L.VLLM_EXECUTOR_BACKEND)
    if override is not None and override.lower() in (MP, RAY):
        return override.lower() == MP
    origin = annotations.get(L.ORIGIN_VERSION)
    if origin is None:
        return graph_owned and not upstream_served
    return origin_allows(origin, MP_MIN_ORIGIN)


def origin_allows(origin: str, minimum: tuple[int, int, int]) -> bool:
    """Whether an object created by operator ``origin`` gets a feature added in ``minimum``."""
    version = parse_version(origin)
    if version is None:
        return False
    core, prerelease = version
    return core > minimum or (core == minimum and not prerelease)


def parse_version(text: str) -> tuple[tuple[int, int, int], bool] | None:
    """``((major, minor, patch), has_prerelease)``; ``None`` when it is not a version."""
    match = _SEMVER.fullmatch(text)
    if match is None:
        return None
    segments = [match.group(1), match.group(2), match.group(3)]
    core = tuple(int(s.lstrip(".")) if s else 0 for s in segments)
    prerelease, metadata = match.group(5), match.group(8)
    if any(n >= _UINT64 for n in core) or not _valid_prerelease(prerelease):
        return None
    if metadata is not None and "" in metadata.split("."):
        return None
    return (core[0], core[1], core[2]), prerelease is not None


def _valid_prerelease(prerelease: str | None) -> bool:
    """Numeric identifiers must not start with 0 (the regex already limits the characters)."""
    if prerelease is None:
        return True
    return not any(p.isdigit() and len(p) > 1 and p[0] == "0" for p in prerelease.split("."))
