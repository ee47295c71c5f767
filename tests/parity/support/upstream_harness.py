"""Upstream's own operator code, built and run: the differential tier's reference side.

``tests/parity/differential/harness/main.go`` is our program; it is compiled inside an extracted
copy of upstream's ``deploy/operator`` module (``$SYNCAGENT_REFERENCE/source``), where it may
import upstream's ``internal/`` packages. Nothing of upstream is copied into the project: the
extraction, the snapshot API ``replace``, the cache (keyed by the tarballs' sha256 and the harness
source's hash) and the build lock are ``tests/support/upstream_source.py``'s, shared with the e2e
tier's upstream operator.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from syncagent.devcluster.build import cache_root
from syncagent.devcluster.gomod import GoModuleError
from tests.support.upstream_source import (
    BuildReport,
    UpstreamBuildError,
    cached_binary,
    extracted_module,
    go_build,
    tarball_digests,
)

HARNESS_SOURCE = Path(__file__).resolve().parents[1] / "differential" / "harness" / "main.go"
# Where main.go goes inside the extracted module: under its root, so internal/ is importable.
HARNESS_PACKAGE = "cmd/syncagent-diff-harness"
BINARY = "syncagent-diff-harness"
HarnessError = UpstreamBuildError  # the name the differential tier's callers know


@dataclass(frozen=True, slots=True)
class HarnessCase:
    """One graph for upstream: its objects and the feature gates its pathway needs."""

    id: str
    namespace: str
    objects: Sequence[dict[str, Any]]
    grove: bool
    lws: bool = True
    discovery_backend: str = ""
    operator_config: Mapping[str, Any] | None = None  # upstream's OperatorConfiguration

    def wire(self) -> dict[str, Any]:
        wire = {
            "id": self.id,
            "namespace": self.namespace,
            "gates": {"grove": self.grove, "lws": self.lws},
            "discoveryBackend": self.discovery_backend,
            "objects": list(self.objects),
        }
        if self.operator_config is not None:
            wire["operatorConfig"] = dict(self.operator_config)
        return wire


@dataclass(slots=True)
class HarnessResult:
    objects: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


def build_key(source: Path, harness: bytes) -> str:
    """The cache key: both tarballs and our harness source; any change builds afresh."""
    parts = [*tarball_digests(source), hashlib.sha256(harness).hexdigest()]
    return "upstream-2a6da14c8-" + hashlib.sha256("".join(parts).encode()).hexdigest()[:20]


def ensure_harness(source: Path, *, log: bool = True) -> BuildReport:
    """The built harness for the tarballs in ``source``, building it unless cached."""
    # Read once: the bytes hashed into the key are the bytes built, even if the file changes.
    harness = HARNESS_SOURCE.read_bytes()
    target = cache_root() / "differential" / build_key(source, harness)

    def build(into: Path) -> None:
        name = "differential" if log else None
        module = extracted_module(source, into, log=name)
        package = module / HARNESS_PACKAGE
        package.mkdir(parents=True)
        (package / "main.go").write_bytes(harness)
        go_build(module, HARNESS_PACKAGE, into, BINARY, log=name)

    return cached_binary(target, BINARY, build)


def run_harness(binary: Path, cases: Sequence[HarnessCase]) -> dict[str, HarnessResult]:
    """Every case through upstream's defaulting and reconcilers: the objects each left behind."""
    payload = orjson.dumps([c.wire() for c in cases])
    proc = subprocess.run(
        [str(binary)], input=payload, capture_output=True, check=False, timeout=600
    )
    if proc.returncode != 0:
        raise HarnessError(f"{binary} exited {proc.returncode}: {proc.stderr.decode()[-4000:]}")
    results = {c.id: HarnessResult() for c in cases}
    for line in proc.stdout.splitlines():
        item = orjson.loads(line)
        result = results[item["case"]]
        if "error" in item:
            result.error = item["error"]
        else:
            result.objects.append(item["object"])
    return results


__all__ = [
    "BuildReport",
    "GoModuleError",
    "HarnessCase",
    "HarnessError",
    "HarnessResult",
    "build_key",
    "ensure_harness",
    "run_harness",
]
