"""Issue 26 item 6: the image's Debian lock and SBOM, as pure functions
(``packaging/supplychain.py``; the image tier checks a built image against them)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def supply(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    path = REPO / "packaging" / "supplychain.py"
    spec = importlib.util.spec_from_file_location("syncagent_supplychain", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "syncagent_supplychain", module)
    spec.loader.exec_module(module)
    return module


def test_lock_round_trips_and_asks_apt_for_every_exact_version(
    supply: ModuleType, tmp_path: Path
) -> None:
    packages = [
        supply.Package("zlib1g", "1:1.2.13.dfsg-1", "amd64"),
        supply.Package("libc6", "2.36-9+deb12u10", "amd64"),
    ]
    lock = tmp_path / "debian.lock"
    lock.write_text(supply.lock_text(packages))
    assert lock.read_text().startswith("# Exact Debian packages")
    assert supply.read_lock(lock) == sorted(packages)
    assert supply.apt_requests(supply.read_lock(lock), wanted=["libc6"], lock_path=lock) == [
        "libc6=2.36-9+deb12u10",
        "zlib1g=1:1.2.13.dfsg-1",
    ]


def test_every_lock_failure_names_the_one_command_that_refreshes_it(
    supply: ModuleType, tmp_path: Path
) -> None:
    lock = tmp_path / "debian.lock"
    lock.write_text("libc6=2.36=amd64\n")
    locked = supply.read_lock(lock)
    errors = []
    with pytest.raises(supply.LockError) as missing:
        supply.apt_requests(locked, wanted=["python3.11-minimal"], lock_path=lock)
    errors.append(str(missing.value))
    newer = [supply.Package("libc6", "2.37", "amd64")]
    with pytest.raises(supply.LockError) as moved:
        supply.check_installed(locked, newer, lock_path=lock)
    errors.append(str(moved.value))
    errors.append(
        str(supply.unserved(lock, "bookworm", "E: Version '2.36' for 'libc6' was not found"))
    )
    lock.write_text("libc6 2.36\n")
    with pytest.raises(supply.LockError) as broken:
        supply.read_lock(lock)
    errors.append(str(broken.value))
    for error in errors:
        assert error.startswith(str(lock)), error
        assert "run `packaging/build-image --refresh-debian-lock`" in error, error
    assert "python3.11-minimal" in errors[0]
    assert "libc6=2.37" in errors[1]
    assert "libc6=2.36" in errors[1]
    supply.check_installed(locked, locked, lock_path=lock)  # the same set passes


def test_sbom_is_spdx_with_a_purl_per_package_and_reads_back(supply: ModuleType) -> None:
    packages = [
        supply.Package("libc6", "2.36-9+deb12u10", "amd64"),
        supply.Package("PyYAML", "6.0.2"),
        supply.Package("typing_extensions", "4.12.2"),
    ]
    document = supply.sbom(
        name="syncagent-image", version="0.1.0", epoch=0, suite="bookworm", packages=packages
    )
    assert document["spdxVersion"] == "SPDX-2.3"
    assert document["creationInfo"]["created"] == "1970-01-01T00:00:00Z"
    purls = [p["externalRefs"][0]["referenceLocator"] for p in document["packages"]]
    assert purls == [
        "pkg:pypi/pyyaml@6.0.2",
        "pkg:deb/debian/libc6@2.36-9+deb12u10?arch=amd64&distro=debian-12",
        "pkg:pypi/typing-extensions@4.12.2",
    ]
    ids = [p["SPDXID"] for p in document["packages"]]
    assert all(i.replace("-", "").replace(".", "").isalnum() for i in ids), ids
    assert len(set(ids)) == len(ids)
    assert sorted(supply.sbom_packages(document)) == sorted(packages)
    again = supply.sbom(
        name="syncagent-image", version="0.1.0", epoch=0, suite="bookworm", packages=packages[::-1]
    )
    assert supply.dumps(again) == supply.dumps(document)


def test_debian_package_and_python_distributions_are_read_as_dpkg_and_pip_write_them(
    supply: ModuleType, tmp_path: Path
) -> None:
    control = "Package: libc6\nSource: glibc\nVersion: 2.36-9\nArchitecture: amd64\n"
    assert supply.debian_package(control) == supply.Package("libc6", "2.36-9", "amd64")
    info = tmp_path / "orjson-3.10.7.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: orjson\nVersion: 3.10.7\n\nbody")
    assert supply.python_distributions(tmp_path) == [supply.Package("orjson", "3.10.7")]


def test_the_openssl_inside_cryptography_is_in_the_sbom_with_its_cpe(supply: ModuleType) -> None:
    cryptography = supply.Package("cryptography", "50.0.2")
    openssl = supply.openssl_in(cryptography, "OpenSSL 3.5.4 30 Sep 2025\n")
    document = supply.sbom(
        name="syncagent-image",
        version="0.1.0",
        epoch=0,
        suite="bookworm",
        packages=[cryptography],
        bundled=[openssl],
    )
    (entry,) = [p for p in document["packages"] if p["name"] == "openssl"]
    assert entry["versionInfo"] == "3.5.4"
    assert {r["referenceLocator"] for r in entry["externalRefs"]} == {
        "pkg:generic/openssl@3.5.4",
        "cpe:2.3:a:openssl:openssl:3.5.4:*:*:*:*:*:*:*",
    }
    assert supply.sbom_bundled(document) == [
        ("openssl", "3.5.4", "SPDXRef-pypi-cryptography-50.0.2")
    ]
    # Read back, the packages are still exactly what the package managers installed.
    assert supply.sbom_packages(document) == [cryptography]


def test_the_probe_reads_the_openssl_of_this_python_s_cryptography(supply: ModuleType) -> None:
    # The same probe build-image runs inside the image's Python, here on the test's own.
    text = subprocess.run(
        [sys.executable, "-B", "-c", supply.OPENSSL_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    found = supply.openssl_in(supply.Package("cryptography", "x"), text)
    assert found.version == text.split()[1]


def test_an_openssl_version_in_an_unknown_format_fails_the_build(supply: ModuleType) -> None:
    with pytest.raises(supply.LockError, match="cannot read the OpenSSL version"):
        supply.openssl_in(supply.Package("cryptography", "50.0.2"), "LibreSSL 3.9.0")
