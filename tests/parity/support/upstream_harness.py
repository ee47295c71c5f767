"""Upstream's own operator code, built and run: the differential tier's reference side.

``tests/parity/differential/harness/main.go`` is our program; it is compiled inside an extracted
copy of upstream's ``deploy/operator`` module (``$SYNCAGENT_REFERENCE/source``), where it may
import upstream's ``internal/`` packages. Nothing of upstream is copied into the project: the
extracted tree and the binary live in the cache (``syncagent.devcluster.build.cache_root``),
keyed by the tarballs' sha256 and the harness source's hash, built once under a file lock as the
control-plane binaries are.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from syncagent.devcluster.build import cache_root
from syncagent.devcluster.gomod import GoModuleError, go_binary

HARNESS_SOURCE = Path(__file__).resolve().parents[1] / "differential" / "harness" / "main.go"
OPERATOR_TARBALL = "dynamo-deploy-operator-2a6da14c8.tar.gz"
SNAPSHOT_TARBALL = "snapshot-api-v0.1.0-alpha.1.tar.gz"
SNAPSHOT_MODULE = "github.com/ai-dynamo/snapshot/api"
# Where main.go goes inside the extracted module: under its root, so internal/ is importable.
HARNESS_PACKAGE = "cmd/syncagent-diff-harness"
BINARY = "syncagent-diff-harness"


class HarnessError(RuntimeError):
    """Upstream's harness could not be built or run; the message carries the tool's output."""


@dataclass(frozen=True, slots=True)
class HarnessCase:
    """One graph for upstream: its objects and the feature gates its pathway needs."""

    id: str
    namespace: str
    objects: Sequence[dict[str, Any]]
    grove: bool
    lws: bool = True
    discovery_backend: str = ""

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "namespace": self.namespace,
            "gates": {"grove": self.grove, "lws": self.lws},
            "discoveryBackend": self.discovery_backend,
            "objects": list(self.objects),
        }


@dataclass(slots=True)
class HarnessResult:
    objects: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BuildReport:
    binary: Path
    built: bool  # False when the cache already had it
    seconds: float


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def build_key(source: Path, harness: bytes) -> str:
    """The cache key: both tarballs and our harness source; any change builds afresh."""
    parts = [_sha256(source / OPERATOR_TARBALL), _sha256(source / SNAPSHOT_TARBALL)]
    parts.append(hashlib.sha256(harness).hexdigest())
    return "upstream-2a6da14c8-" + hashlib.sha256("".join(parts).encode()).hexdigest()[:20]


def ensure_harness(source: Path, *, log: bool = True) -> BuildReport:
    """The built harness for the tarballs in ``source``, building it unless cached."""
    # Read once: the bytes hashed into the key are the bytes built, even if the file changes.
    harness = HARNESS_SOURCE.read_bytes()
    key = build_key(source, harness)
    target = cache_root() / "differential" / key
    binary = target / BINARY
    started = time.monotonic()
    if os.access(binary, os.X_OK):
        return BuildReport(binary, built=False, seconds=time.monotonic() - started)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Several test processes may start at once; one builds, the others wait and reuse.
    with (target.parent / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.access(binary, os.X_OK):
            return BuildReport(binary, built=False, seconds=time.monotonic() - started)
        _build(source, target, harness, log=log)
    return BuildReport(binary, built=True, seconds=time.monotonic() - started)


def _build(source: Path, target: Path, harness: bytes, *, log: bool) -> None:
    tree = target / "src"
    # A half-extracted tree from an interrupted build is discarded, never reused.
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    _extract(source / OPERATOR_TARBALL, tree)
    _extract(source / SNAPSHOT_TARBALL, tree / "snapshot")
    module = tree / "deploy" / "operator"
    snapshot = _module_root(tree / "snapshot")
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod -buildvcs=false"}
    # The module proxy refuses the snapshot API module; the tarball serves it instead.
    _run([go_binary(), "mod", "edit", f"-replace={SNAPSHOT_MODULE}={snapshot}"], module, env, log)
    package = module / HARNESS_PACKAGE
    package.mkdir(parents=True)
    (package / "main.go").write_bytes(harness)
    partial = target / f".{BINARY}.partial"
    cmd = [go_binary(), "build", "-trimpath", "-o", str(partial), f"./{HARNESS_PACKAGE}"]
    _run(cmd, module, env, log)
    partial.rename(target / BINARY)


def _extract(tarball: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")


def _module_root(folder: Path) -> Path:
    """The folder of the snapshot tarball that holds its go.mod (the tarball's layout may nest it)."""
    found = sorted(folder.rglob("go.mod"), key=lambda p: len(p.parts))
    if not found:
        raise HarnessError(f"{SNAPSHOT_TARBALL}: no go.mod inside")
    return found[0].parent


def _run(cmd: list[str], cwd: Path, env: dict[str, str], log: bool) -> None:
    if log:
        print(f"differential: {' '.join(cmd[1:3])} in {cwd}", flush=True)
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise HarnessError(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stderr.strip()[-4000:]}")


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
