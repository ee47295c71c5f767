"""Go module downloads: the source of every pinned third-party artefact (CRDs, OpenAPI, code)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from syncagent.devcluster import versions


class GoModuleError(RuntimeError):
    """A Go module could not be downloaded; the message carries the go command's own error."""


def go_binary() -> str:
    found = shutil.which("go")
    if not found:
        raise GoModuleError(
            "go: the Go toolchain is not on PATH; install Go 1.25+ to build the test control plane"
        )
    return found


@cache
def module_dir(module: str, version: str) -> Path:
    """Download ``module@version`` into the Go module cache and return its directory."""
    proc = subprocess.run(
        [go_binary(), "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GOFLAGS": "-mod=mod"},
        cwd=_neutral_dir(),
    )
    try:
        info = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise GoModuleError(f"{module}@{version}: {proc.stderr.strip()}") from None
    if proc.returncode != 0 or "Error" in info or "Dir" not in info:
        raise GoModuleError(f"{module}@{version}: {info.get('Error') or proc.stderr.strip()}")
    return Path(info["Dir"])


def _neutral_dir() -> str:
    # Outside any go.mod, so a surrounding module's requirements never interfere.
    return str(Path(os.environ.get("TMPDIR", "/tmp")))


def kubernetes_openapi() -> Path:
    """The pinned Kubernetes OpenAPI v3 core/v1 document (what ``syncagent.api.kubeschema``
    converts), downloaded with the ``k8s.io/kubernetes`` module."""

    root = module_dir(versions.KUBERNETES_MODULE, versions.KUBERNETES)
    return root / "api/openapi-spec/v3/api__v1_openapi.json"


if __name__ == "__main__":
    print(kubernetes_openapi())
