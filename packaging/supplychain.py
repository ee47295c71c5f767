"""The image's Debian version lock and its SBOM (loaded by ``packaging/build-image``).

Standard library only, like build-image: it runs before the project is installed.

- ``packaging/debian.lock`` holds the exact version of every Debian package the image's root
  filesystem is extracted from (the pinned packages and all they depend on). The build asks apt
  for exactly those versions; when the suite no longer serves one (a point release or a
  security update replaced it), the build fails and says how to refresh the lock.
- The SBOM (SPDX 2.3 JSON) lists every Debian package and every Python distribution in the
  image, with package URLs, as the build installed them, and what a distribution links
  statically (the OpenSSL inside cryptography's wheel), which no package manager records.
"""

from __future__ import annotations

import datetime
import email.parser
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REFRESH = "packaging/build-image --refresh-debian-lock"
HEADER = (
    "# Exact Debian packages of the image's root filesystem, one name=version=architecture per\n"
    f"# line. Written by `{REFRESH}`;\n# commit it with the change that needed it.\n"
)
SBOM_PATH = "usr/share/doc/syncagent/sbom.spdx.json"
DEBIAN_RELEASE = {"bookworm": "debian-12"}


@dataclass(frozen=True, order=True)
class Package:
    """A Debian package (``arch`` set) or a Python distribution (``arch`` empty)."""

    name: str
    version: str
    arch: str = ""

    @property
    def purl(self) -> str:
        if self.arch:
            return f"pkg:deb/debian/{self.name}@{self.version}?arch={self.arch}"
        return f"pkg:pypi/{_pypi_name(self.name)}@{self.version}"


@dataclass(frozen=True, order=True)
class Bundled:
    """A library linked into a distribution's extension, named as scanners know it."""

    name: str
    version: str
    inside: Package
    cpe_vendor: str

    @property
    def purl(self) -> str:
        return f"pkg:generic/{self.name}@{self.version}"

    @property
    def cpe(self) -> str:
        return f"cpe:2.3:a:{self.cpe_vendor}:{self.name}:{self.version}:*:*:*:*:*:*:*"


# What cryptography.hazmat.backends.openssl.backend.openssl_version_text() prints inside the
# image's Python: "OpenSSL 3.5.4 30 Sep 2025".
OPENSSL_PROBE = (
    "from cryptography.hazmat.backends.openssl import backend; "
    "print(backend.openssl_version_text())"
)


def openssl_in(cryptography: Package, version_text: str) -> Bundled:
    """The OpenSSL that ``version_text`` (``OPENSSL_PROBE``'s output) names."""
    found = re.fullmatch(r"OpenSSL (\d+\.\d+\.\d+[a-z]?)\b.*", version_text.strip())
    if found is None:
        raise LockError(
            f"cryptography {cryptography.version}: cannot read the OpenSSL version from "
            f"{version_text.strip()!r}; update supplychain.openssl_in for its format"
        )
    return Bundled("openssl", found.group(1), cryptography, cpe_vendor="openssl")


class LockError(RuntimeError):
    """The lock does not describe what the build needs; the message says what to run."""


def read_lock(path: Path) -> list[Package]:
    packages = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.strip().split("=")
        if len(parts) != 3 or not all(parts):
            raise LockError(f"{path}:{number}: {line!r} is not name=version=arch; run `{REFRESH}`")
        packages.append(Package(*parts))
    return packages


def lock_text(packages: Iterable[Package]) -> str:
    return HEADER + "".join(f"{p.name}={p.version}={p.arch}\n" for p in sorted(packages))


def apt_requests(lock: list[Package], *, wanted: Iterable[str], lock_path: Path) -> list[str]:
    """``name=version`` for every locked package; the pinned top-level packages must be in it."""
    missing = sorted(set(wanted) - {p.name for p in lock})
    if missing:
        raise LockError(
            f"{lock_path}: no locked version of {', '.join(missing)} (the image's package list "
            f"changed); run `{REFRESH}` and commit {lock_path.name}"
        )
    return [f"{p.name}={p.version}" for p in lock]


def check_installed(lock: list[Package], installed: list[Package], *, lock_path: Path) -> None:
    """apt installed exactly the locked packages (a new dependency would not be locked)."""
    extra, gone = set(installed) - set(lock), set(lock) - set(installed)
    if extra or gone:
        named = ", ".join(f"{p.name}={p.version}" for p in sorted(extra | gone))
        raise LockError(
            f"{lock_path}: the build installed other packages than the lock names ({named}); "
            f"run `{REFRESH}` and commit {lock_path.name}"
        )


def unserved(lock_path: Path, suite: str, detail: str) -> LockError:
    return LockError(
        f"{lock_path}: Debian {suite} no longer serves every locked version (apt: {detail}); "
        f"run `{REFRESH}` and commit {lock_path.name}"
    )


def debian_package(control: str) -> Package:
    """The package that ``dpkg-deb --field`` describes."""
    fields = email.parser.Parser().parsestr(control)
    return Package(fields["Package"], fields["Version"], fields["Architecture"])


def python_distributions(site_packages: Path) -> list[Package]:
    out = []
    for metadata in sorted(site_packages.glob("*.dist-info/METADATA")):
        fields = email.parser.Parser().parsestr(metadata.read_text(errors="replace"))
        out.append(Package(fields["Name"], fields["Version"]))
    return out


def sbom(
    *,
    name: str,
    version: str,
    epoch: int,
    suite: str,
    packages: Iterable[Package],
    bundled: Iterable[Bundled] = (),
) -> dict[str, object]:
    """An SPDX 2.3 document of ``packages`` and what they link in (each ``bundled`` entry with
    a CONTAINS relationship from its distribution); the same inputs give the same bytes."""
    created = datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    distro = DEBIAN_RELEASE.get(suite, f"debian-{suite}")
    entries = []
    for p in sorted(set(packages)):
        purl = f"{p.purl}&distro={distro}" if p.arch else p.purl
        entries.append(
            {
                "name": p.name,
                "SPDXID": _package_id(p),
                "versionInfo": p.version,
                "downloadLocation": "NOASSERTION",
                "supplier": "Organization: Debian" if p.arch else "NOASSERTION",
                "filesAnalyzed": False,
                "externalRefs": [
                    {
                        "referenceCategory": "PACKAGE-MANAGER",
                        "referenceType": "purl",
                        "referenceLocator": purl,
                    }
                ],
            }
        )
    relationships = []
    for b in sorted(set(bundled)):
        entries.append(_bundled_entry(b))
        relationships.append(
            {
                "spdxElementId": _package_id(b.inside),
                "relationshipType": "CONTAINS",
                "relatedSpdxElement": _bundled_id(b),
            }
        )
    return {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{name}-{version}",
        "documentNamespace": f"https://github.com/syncagent/syncagent/sbom/{version}/{epoch}",
        "creationInfo": {"created": created, "creators": ["Tool: packaging/build-image"]},
        "packages": entries,
        "relationships": relationships,
    }


def sbom_packages(document: Mapping[str, object]) -> list[Package]:
    """The packages an SBOM of :func:`sbom` lists (the image tier reads it back)."""
    out = []
    for entry in document["packages"]:  # type: ignore[attr-defined]
        if entry["SPDXID"].startswith(BUNDLED_ID):
            continue
        (ref,) = entry["externalRefs"]
        purl = ref["referenceLocator"]
        arch = re.search(r"[?&]arch=([^&]+)", purl)
        out.append(Package(entry["name"], entry["versionInfo"], arch.group(1) if arch else ""))
    return out


def sbom_bundled(document: Mapping[str, object]) -> list[tuple[str, str, str]]:
    """(name, version, SPDXID of the containing package) of every bundled entry of an SBOM."""
    ids = {
        r["relatedSpdxElement"]: r["spdxElementId"]
        for r in document.get("relationships") or []  # type: ignore[attr-defined]
        if r["relationshipType"] == "CONTAINS"
    }
    return [
        (entry["name"], entry["versionInfo"], ids.get(entry["SPDXID"], ""))
        for entry in document["packages"]  # type: ignore[attr-defined]
        if entry["SPDXID"].startswith(BUNDLED_ID)
    ]


def _bundled_entry(b: Bundled) -> dict[str, object]:
    return {
        "name": b.name,
        "SPDXID": _bundled_id(b),
        "versionInfo": b.version,
        "downloadLocation": "NOASSERTION",
        "supplier": "NOASSERTION",
        "filesAnalyzed": False,
        "comment": f"statically linked into {b.inside.name} {b.inside.version}",
        "externalRefs": [
            {
                "referenceCategory": "PACKAGE-MANAGER",
                "referenceType": "purl",
                "referenceLocator": b.purl,
            },
            {
                "referenceCategory": "SECURITY",
                "referenceType": "cpe23Type",
                "referenceLocator": b.cpe,
            },
        ],
    }


BUNDLED_ID = "SPDXRef-bundled-"


def _package_id(p: Package) -> str:
    kind = "deb" if p.arch else "pypi"
    return f"SPDXRef-{kind}-{_spdx_id(p.name)}-{_spdx_id(p.version)}"


def _bundled_id(b: Bundled) -> str:
    inside = f"{_spdx_id(b.inside.name)}-{_spdx_id(b.inside.version)}"
    return f"{BUNDLED_ID}{_spdx_id(b.name)}-{_spdx_id(b.version)}-in-{inside}"


def dumps(document: Mapping[str, object]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _spdx_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "-", text)


def _pypi_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
