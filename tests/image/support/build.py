"""Building the image for the tests, and reading the archive's index (no tests here)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import syncagent

REPO = Path(__file__).resolve().parents[3]
BUILD = REPO / "packaging" / "build-image"


@dataclass(frozen=True)
class Built:
    archive: Path
    digest: str  # of the manifest, as index.json names it
    seconds: float


def build_image(output: Path, *flags: str) -> Built:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(BUILD), "--output", str(output), *flags],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"packaging/build-image failed:\n{proc.stderr[-6000:]}"
    archive = output / f"syncagent-{syncagent.__version__}.oci.tar"
    return Built(archive, index(archive)["manifests"][0]["digest"], time.monotonic() - started)


def index(archive: Path) -> dict:
    with tarfile.open(archive) as tar:
        member = tar.extractfile("index.json")
        assert member is not None
        return json.load(member)
