"""Pure parts of the test control plane: pins, vendored CRDs, generated build modules."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from syncagent.devcluster import build, crds, versions


def test_staging_modules_follow_the_kubernetes_minor() -> None:
    assert versions.staging_version("v1.36.3") == "v0.36.3"


@pytest.mark.parametrize("name", sorted(crds.VENDORED_SHA256))
def test_vendored_crds_are_the_pinned_upstream_blobs(name: str) -> None:
    assert crds.sha256(crds.vendored_path(name)) == crds.VENDORED_SHA256[name]


@pytest.mark.parametrize("name", crds.GROVE_FILES)
def test_the_vendored_grove_crds_are_those_of_the_pinned_release(name: str) -> None:
    # The fallback for a proxy that refuses operator/api moves with versions.GROVE.
    path = crds._vendored(name, versions.GROVE)
    assert path.name == name.removesuffix(".yaml") + f".{versions.GROVE}.yaml"
    crd = yaml.safe_load(path.read_text())
    assert crd["spec"]["group"] == "grove.io"
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"]


def test_kubernetes_build_module_pins_every_staging_replace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "go.mod").write_text(
        "module k8s.io/kubernetes\n\nreplace (\n"
        "\tk8s.io/api => ./staging/src/k8s.io/api\n"
        "\tk8s.io/client-go => ./staging/src/k8s.io/client-go\n)\n"
    )
    monkeypatch.setattr(build, "module_dir", lambda module, version: tmp_path)
    gomod = build._kubernetes_module()
    assert f"require k8s.io/kubernetes {versions.KUBERNETES}" in gomod
    staging = versions.staging_version()
    assert f"k8s.io/api => k8s.io/api {staging}" in gomod
    assert f"k8s.io/client-go => k8s.io/client-go {staging}" in gomod


def test_etcd_build_module_requires_siblings_at_the_same_tag() -> None:
    gomod = build._etcd_module()
    for sibling in ("api/v3", "client/pkg/v3", "client/v3", "pkg/v3", "server/v3"):
        assert f"go.etcd.io/etcd/{sibling} {versions.ETCD}" in gomod


def test_binaries_are_cached_by_version_outside_the_repo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SYNCAGENT_CACHE", str(tmp_path))
    folder = build.bin_dir()
    assert folder.parent.parent == tmp_path
    assert versions.KUBERNETES in folder.name
    assert versions.ETCD in folder.name


def test_kubebuilder_assets_are_used_as_they_are(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in build.BINARIES:
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path))
    assert build.ensure_binaries() == build.Binaries.in_dir(tmp_path)


def test_kubebuilder_assets_lacking_a_binary_take_it_from_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # envtest's asset folders hold etcd, kube-apiserver and kubectl; the rest come from the cache.
    assets, cache = tmp_path / "assets", tmp_path / "cache"
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets))
    monkeypatch.setenv("SYNCAGENT_CACHE", str(cache))
    envtest = {"etcd", "kube-apiserver", "kubectl"}
    for folder, names in ((assets, envtest), (build.bin_dir(), set(build.BINARIES) - envtest)):
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_text("#!/bin/sh\n")
            (folder / name).chmod(0o755)
    found = build.ensure_binaries().paths()
    assert {n for n, p in found.items() if p.parent == assets} == envtest
    assert found["kube-scheduler"] == build.bin_dir() / "kube-scheduler"


def test_version_ldflags_stamp_the_pinned_release() -> None:
    flags = build._kube_version_ldflags()
    assert f"gitVersion={versions.KUBERNETES}" in flags
    assert "gitMinor=36" in flags


def _executables(folder: Path, names: set[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)


def test_a_matrix_release_swaps_in_only_its_apiserver(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SYNCAGENT_CACHE", str(tmp_path))
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    older = versions.KUBERNETES_MATRIX["1.30"]
    _executables(build.bin_dir(), set(build.BINARIES))
    _executables(tmp_path / "bin" / f"kube-apiserver-{older}", {"kube-apiserver"})
    found = build.ensure_binaries(kubernetes=older).paths()
    assert found.pop("kube-apiserver").parent.name == f"kube-apiserver-{older}"
    assert all(p.parent == build.bin_dir() for p in found.values())


def test_an_unpinned_release_is_refused_with_the_pinned_ones() -> None:
    with pytest.raises(build.GoModuleError, match=r"pick one of v1\.30\.14"):
        build.ensure_apiserver("v1.29.0")


def test_an_older_release_builds_from_its_own_staging_tags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "go.mod").write_text("replace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n)\n")
    monkeypatch.setattr(build, "module_dir", lambda module, version: tmp_path)
    gomod = build._kubernetes_module("v1.30.14")
    assert "require k8s.io/kubernetes v1.30.14" in gomod
    assert "k8s.io/api => k8s.io/api v0.30.14" in gomod
    assert "gitMinor=30" in build._kube_version_ldflags("v1.30.14")


def test_the_chart_declares_the_oldest_kubernetes_the_matrix_runs() -> None:
    chart = yaml.safe_load((Path(__file__).parents[3] / "helm/syncagent/Chart.yaml").read_text())
    oldest = min(versions.KUBERNETES_MATRIX, key=lambda minor: tuple(map(int, minor.split("."))))
    assert chart["kubeVersion"] == f">={oldest}.0-0"
