"""The image's Debian version lock and its SBOM (loaded by ``packaging/build-image``).

Standard library only, like build-image: it runs before the project is installed.

- ``packaging/debian.lock`` holds the exact version of every Debian package the image's root
  filesystem is extracted from (the pinned packages and all they depend on). The build asks apt
  for exactly those versions; when the suite no longer serves one (a point release or a
  security update replaced it), the build fails and says how to refresh the lock.
- The SBOM (SPDX 2.3 JSON) lists every Debian package and every Python distribution in the
  image, with package URLs, as the build installed them.
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
    *, name: str, version: str, epoch: int, suite: str, packages: Iterable[Package]
) -> dict[str, object]:
    """An SPDX 2.3 document of ``packages``; the same inputs give the same bytes."""
    created = datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    distro = DEBIAN_RELEASE.get(suite, f"debian-{suite}")
    entries = []
    for p in sorted(set(packages)):
        kind = "deb" if p.arch else "pypi"
        purl = f"{p.purl}&distro={distro}" if p.arch else p.purl
        entries.append(
            {
                "name": p.name,
                "SPDXID": f"SPDXRef-{kind}-{_spdx_id(p.name)}-{_spdx_id(p.version)}",
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
    return {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{name}-{version}",
        "documentNamespace": f"https://github.com/syncagent/syncagent/sbom/{version}/{epoch}",
        "creationInfo": {"created": created, "creators": ["Tool: packaging/build-image"]},
        "packages": entries,
    }


def sbom_packages(document: Mapping[str, object]) -> list[Package]:
    """The packages an SBOM of :func:`sbom` lists (the image tier reads it back)."""
    out = []
    for entry in document["packages"]:  # type: ignore[attr-defined]
        (ref,) = entry["externalRefs"]
        purl = ref["referenceLocator"]
        arch = re.search(r"[?&]arch=([^&]+)", purl)
        out.append(Package(entry["name"], entry["versionInfo"], arch.group(1) if arch else ""))
    return out


def dumps(document: Mapping[str, object]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _spdx_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "-", text)


def _pypi_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
