"""Upstream's operator source, extracted and built in the cache (no tests here).

The parity tier's differential harness and the e2e tier's upstream operator both compile Go code
inside upstream's ``deploy/operator`` module from ``$SYNCAGENT_REFERENCE/source``. Nothing of
upstream is copied into the project: the tarballs are extracted under
``syncagent.devcluster.build.cache_root()``, the snapshot API module is served from its own
tarball through a ``replace`` (the Go module proxy refuses it), every other module comes from the
proxy, and each binary is built once, under a file lock, into a folder keyed by the tarballs'
sha256 (plus whatever else the caller hashes in).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from syncagent.devcluster import versions
from syncagent.devcluster.gomod import go_binary

OPERATOR_TARBALL = "dynamo-deploy-operator-2a6da14c8.tar.gz"
SNAPSHOT_TARBALL = "snapshot-api-v0.1.0-alpha.1.tar.gz"
SNAPSHOT_MODULE = "github.com/ai-dynamo/snapshot/api"
GO_ENV = {"CGO_ENABLED": "0", "GOFLAGS": "-mod=mod -buildvcs=false"}
REPO = Path(__file__).resolve().parents[2]
DEFAULT_REFERENCE = REPO.parent / "shared" / "reference"


class UpstreamBuildError(RuntimeError):
    """Upstream's code could not be built; the message carries the go tool's output."""


@dataclass(frozen=True, slots=True)
class BuildReport:
    binary: Path
    built: bool  # False when the cache already had it
    seconds: float


def reference_root() -> Path:
    """``$SYNCAGENT_REFERENCE``, default ``../shared/reference`` next to the repository."""
    return Path(os.environ.get("SYNCAGENT_REFERENCE") or DEFAULT_REFERENCE).resolve()


def grove_source() -> Path:
    """Grove's source tarball (syncagent.devcluster.grove_operator builds the operator from it)."""
    return reference_root() / "source" / versions.GROVE_SOURCE


def grove_source_if_any() -> Path | None:
    source = grove_source()
    return source if source.is_file() else None


def missing_source() -> str | None:
    """Why upstream's source tarballs cannot be used, or ``None`` when they can."""
    source = reference_root() / "source"
    absent = [str(source / t) for t in (OPERATOR_TARBALL, SNAPSHOT_TARBALL)]
    absent = [p for p in absent if not Path(p).is_file()]
    if absent:
        return (
            f"upstream source not found ({', '.join(absent)}); set SYNCAGENT_REFERENCE to the "
            f"shared/reference folder (default {DEFAULT_REFERENCE})"
        )
    return None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def tarball_digests(source: Path) -> list[str]:
    """The sha256 of both tarballs: the part of every cache key that names upstream's code."""
    return [sha256_file(source / OPERATOR_TARBALL), sha256_file(source / SNAPSHOT_TARBALL)]


def cached_binary(target: Path, name: str, build: Callable[[Path], None]) -> BuildReport:
    """``target/name``, calling ``build(target)`` first unless it is already there.

    Several test processes may start at once: one builds under the lock, the others wait for
    it and reuse its binary. ``build`` must leave the binary in place only once it is complete.
    """
    binary = target / name
    started = time.monotonic()
    if os.access(binary, os.X_OK):
        return BuildReport(binary, built=False, seconds=time.monotonic() - started)
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.access(binary, os.X_OK):
            return BuildReport(binary, built=False, seconds=time.monotonic() - started)
        build(target)
    return BuildReport(binary, built=True, seconds=time.monotonic() - started)


def extracted_module(source: Path, target: Path, *, log: str | None) -> Path:
    """A fresh copy of upstream's operator module under ``target/src``, its ``replace`` made."""
    tree = target / "src"
    # A half-extracted tree from an interrupted build is discarded, never reused.
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    _extract(source / OPERATOR_TARBALL, tree)
    _extract(source / SNAPSHOT_TARBALL, tree / "snapshot")
    module = tree / "deploy" / "operator"
    snapshot = _module_root(tree / "snapshot")
    run_go(["mod", "edit", f"-replace={SNAPSHOT_MODULE}={snapshot}"], module, log=log)
    return module


def go_build(module: Path, package: str, target: Path, name: str, *, log: str | None) -> None:
    """``go build`` of ``./package`` into ``target/name``, renamed into place when complete."""
    partial = target / f".{name}.partial"
    run_go(["build", "-trimpath", "-o", str(partial), f"./{package}"], module, log=log)
    partial.rename(target / name)


def run_go(args: list[str], cwd: Path, *, log: str | None) -> None:
    """The go tool in ``cwd``; ``log`` names the caller in a progress line (None: silent)."""
    if log:
        print(f"{log}: go {' '.join(args[:2])} in {cwd}", flush=True)
    env = {**os.environ, **GO_ENV}
    cmd = [go_binary(), *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise UpstreamBuildError(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stderr.strip()[-4000:]}")


def _extract(tarball: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")


def _module_root(folder: Path) -> Path:
    """The folder of the snapshot tarball that holds its go.mod (the tarball's layout may nest it)."""
    found = sorted(folder.rglob("go.mod"), key=lambda p: len(p.parts))
    if not found:
        raise UpstreamBuildError(f"{SNAPSHOT_TARBALL}: no go.mod inside")
    return found[0].parent
