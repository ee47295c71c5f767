"""Issue 26 item 6: the image's SBOM lists exactly the Debian packages and Python distributions
its root filesystem holds (and, issue 41 item 6, the OpenSSL linked into cryptography), those Debian packages are exactly packaging/debian.lock, and a lock
the suite no longer serves fails the build with the one command that refreshes it."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import syncagent
from tests.image.support.build import BUILD, REPO, Built
from tests.image.support.container import Bundle, unpack

VENV_SITE = "opt/syncagent/lib/python3.11/site-packages"


def _supply() -> ModuleType:
    path = REPO / "packaging" / "supplychain.py"
    spec = importlib.util.spec_from_file_location("syncagent_supplychain_image", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves annotations through sys.modules
    spec.loader.exec_module(module)
    return module


SUPPLY = _supply()


@pytest.fixture(scope="module")
def bundle(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return unpack(built.archive, syncagent.__version__, tmp_path_factory.mktemp("sbom"))


def _dpkg_status(rootfs: Path) -> set[object]:
    text = (rootfs / "var/lib/dpkg/status").read_text()
    return {SUPPLY.debian_package(stanza) for stanza in text.split("\n\n") if stanza.strip()}


def test_sbom_lists_every_package_of_the_root_filesystem_and_nothing_else(
    bundle: Bundle, built: Built
) -> None:
    inside = (bundle.rootfs / SUPPLY.SBOM_PATH).read_text()
    document = json.loads(inside)
    assert document["spdxVersion"] == "SPDX-2.3"
    listed = SUPPLY.sbom_packages(document)
    debian = {p for p in listed if p.arch}
    python = {p for p in listed if not p.arch}
    assert debian == _dpkg_status(bundle.rootfs)
    assert python == set(SUPPLY.python_distributions(bundle.rootfs / VENV_SITE))
    assert {p.name for p in python} >= {"syncagent", "lightkube", "pydantic", "anyio", "orjson"}
    assert len(listed) == len(debian) + len(python) == len(set(listed))
    # The copy next to the archive is the one in the image.
    beside = built.archive.parent / f"syncagent-{syncagent.__version__}.spdx.json"
    assert beside.read_text() == inside


def test_sbom_names_the_openssl_linked_into_cryptography(bundle: Bundle) -> None:
    document = json.loads((bundle.rootfs / SUPPLY.SBOM_PATH).read_text())
    python = SUPPLY.python_distributions(bundle.rootfs / VENV_SITE)
    (cryptography,) = (p for p in python if p.name == "cryptography")
    # CI installs the image's lock, so this process runs the very wheel the image holds, and
    # its OpenSSL is the one the image's cryptography reported at build time.
    assert cryptography.version == importlib.metadata.version("cryptography")
    from cryptography.hazmat.backends.openssl import backend

    ours = SUPPLY.openssl_in(cryptography, backend.openssl_version_text())
    assert SUPPLY.sbom_bundled(document) == [
        ("openssl", ours.version, f"SPDXRef-pypi-cryptography-{cryptography.version}")
    ]


def test_debian_packages_are_exactly_the_lock(bundle: Bundle) -> None:
    lock = SUPPLY.read_lock(REPO / "packaging" / "debian.lock")
    assert set(lock) == _dpkg_status(bundle.rootfs)


def test_a_lock_the_suite_no_longer_serves_fails_with_the_refresh_command(
    built: Built, tmp_path: Path
) -> None:
    lock = SUPPLY.read_lock(REPO / "packaging" / "debian.lock")
    gone = [
        SUPPLY.Package(p.name, f"{p.version}~gone", p.arch) if p.name == "libc6" else p
        for p in lock
    ]
    stale = tmp_path / "debian.lock"
    stale.write_text(SUPPLY.lock_text(gone))
    proc = subprocess.run(
        [
            sys.executable,
            str(BUILD),
            "--output",
            str(tmp_path / "out"),
            "--debian-lock",
            str(stale),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"build-image: {stale}: Debian bookworm no longer serves every locked version" in (
        proc.stderr
    ), proc.stderr[-3000:]
    assert "run `packaging/build-image --refresh-debian-lock`" in proc.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
