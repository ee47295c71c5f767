"""Build the control-plane binaries from pinned Go modules, cached outside the repo by version.

``kube-apiserver``, ``kube-controller-manager``, ``kube-scheduler`` and ``kubectl`` come from
``k8s.io/kubernetes`` (its staging modules pinned to the matching ``v0.X.Y`` tags), ``etcd`` from
``go.etcd.io/etcd/server/v3``; of the older releases of the version matrix
(``versions.KUBERNETES_MATRIX``) only ``kube-apiserver`` (:func:`ensure_apiserver`).
``KUBEBUILDER_ASSETS``, when set, names a folder (the envtest convention) whose binaries are used
as they are; only what it lacks is built into the cache.
``helm``, ``kwok`` and the LeaderWorkerSet manager are single ``go install`` builds
(:func:`ensure_tool`), each in its own folder keyed by its version.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path

from syncagent.devcluster import versions
from syncagent.devcluster.gomod import GoModuleError, go_binary, module_dir

# Every binary and the Go package it is built from; all but etcd come from k8s.io/kubernetes.
PACKAGES: dict[str, str] = {
    "etcd": versions.ETCD_MODULE,
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
    "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
    "kubectl": "k8s.io/kubernetes/cmd/kubectl",
}
BINARIES = tuple(PACKAGES)
_STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Binaries:
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kubectl: Path

    @classmethod
    def in_dir(cls, folder: Path) -> Binaries:
        return cls(*(folder / name for name in BINARIES))

    def paths(self) -> dict[str, Path]:
        return {name: getattr(self, f.name) for name, f in zip(BINARIES, fields(self), strict=True)}

    def missing(self) -> list[Path]:
        return [p for p in self.paths().values() if not os.access(p, os.X_OK)]


def cache_root() -> Path:
    """Where built binaries live: ``$SYNCAGENT_CACHE`` or the XDG cache, never the repo."""
    explicit = os.environ.get("SYNCAGENT_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "syncagent"


def bin_dir() -> Path:
    key = f"kubernetes-{versions.KUBERNETES}_etcd-{versions.ETCD}"
    return cache_root() / "bin" / key


def ensure_binaries(*, kubernetes: str = versions.KUBERNETES, log: bool = True) -> Binaries:
    """Return every binary, building the ones neither ``KUBEBUILDER_ASSETS`` nor the cache has.

    ``kubernetes`` other than the pinned release (one of ``versions.KUBERNETES_MATRIX``) swaps in
    that release's ``kube-apiserver``; every other binary stays the pinned one.
    """
    if kubernetes != versions.KUBERNETES:
        pinned = ensure_binaries(log=log)
        return replace(pinned, kube_apiserver=ensure_apiserver(kubernetes, log=log))
    target = bin_dir()
    cached = Binaries.in_dir(target)
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    chosen = _prefer(Binaries.in_dir(Path(assets)), cached) if assets else cached
    if not chosen.missing():
        return chosen
    target.mkdir(parents=True, exist_ok=True)
    # Several test processes may start at once; one builds, the others wait and reuse.
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Asked again under the lock: another process may have built them while we waited.
        missing = chosen.missing()
        _build_missing(
            [name for name, p in chosen.paths().items() if p in missing], target, log=log
        )
    if chosen.missing():
        raise GoModuleError(f"build finished but {chosen.missing()} are missing")
    return chosen


def _prefer(given: Binaries, fallback: Binaries) -> Binaries:
    """Each binary from ``given`` when it is there, else from ``fallback``."""
    paths = [
        p if os.access(p, os.X_OK) else fallback.paths()[name] for name, p in given.paths().items()
    ]
    return Binaries(*paths)


def ensure_apiserver(kubernetes: str, *, log: bool = True) -> Path:
    """``kube-apiserver`` of an older release, built alone into its own cache folder."""
    if kubernetes not in versions.KUBERNETES_MATRIX.values():
        raise GoModuleError(
            f"kube-apiserver {kubernetes}: not a pinned version; pick one of "
            f"{', '.join(versions.KUBERNETES_MATRIX.values())} (syncagent/devcluster/versions.py)"
        )
    target = cache_root() / "bin" / f"kube-apiserver-{kubernetes}"
    binary = target / "kube-apiserver"
    if os.access(binary, os.X_OK):
        return binary
    target.mkdir(parents=True, exist_ok=True)
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.access(binary, os.X_OK):
            _build(
                _kubernetes_module(kubernetes),
                {"kube-apiserver": PACKAGES["kube-apiserver"]},
                target,
                f"kube-apiserver-{kubernetes}",
                ldflags=_kube_version_ldflags(kubernetes),
                log=log,
            )
    return binary


def _build_missing(names: list[str], target: Path, *, log: bool) -> None:
    if "etcd" in names:
        _build(_etcd_module(), {"etcd": PACKAGES["etcd"]}, target, _build_key("etcd"), log=log)
    kube = {n: PACKAGES[n] for n in names if n != "etcd"}
    if kube:
        _build(
            _kubernetes_module(),
            kube,
            target,
            _build_key("kubernetes"),
            ldflags=_kube_version_ldflags(),
            log=log,
        )


@dataclass(frozen=True, slots=True)
class GoTool:
    """A binary built from one pinned module's main package; that module's go.mod decides every
    dependency (so only modules without ``replace`` lines qualify)."""

    name: str
    module: str
    version: str
    package: str
    ldflags: str = ""
    # Told apart in the cache from a build of the same version with other ldflags.
    variant: str = ""

    def path(self) -> Path:
        return cache_root() / "bin" / f"{self.name}-{self.version}{self.variant}" / self.name


def helm_tool() -> GoTool:
    major, minor = versions.HELM_KUBERNETES
    # What helm's own Makefile stamps into a release.
    kube = " ".join(
        f"-X helm.sh/helm/v3/pkg/{pkg}.k8sVersion{part}={value}"
        for pkg in ("chartutil", "lint/rules")
        for part, value in (("Major", major), ("Minor", minor))
    )
    return GoTool(
        "helm",
        versions.HELM_MODULE,
        versions.HELM,
        f"{versions.HELM_MODULE}/cmd/helm",
        f"-X helm.sh/helm/v3/internal/version.version={versions.HELM} {kube}",
        variant=f"_kube-{major}.{minor}",
    )


def kwok_tool() -> GoTool:
    # kwok stamps its own release into the binary (pkg/consts.Version); no flags needed.
    return GoTool("kwok", versions.KWOK_MODULE, versions.KWOK, f"{versions.KWOK_MODULE}/cmd/kwok")


def lws_manager_tool(version: str) -> GoTool:
    if version not in versions.LWS_MANAGER_VERSIONS:
        raise GoModuleError(
            f"sigs.k8s.io/lws@{version}: no manager can be built (the module proxy serves only "
            f"{', '.join(versions.LWS_MANAGER_VERSIONS)}); its CRDs still install with --bare"
        )
    # The manager's main package is sigs.k8s.io/lws/cmd (cmd/main.go).
    return GoTool(
        "lws-manager",
        versions.LWS_MODULE,
        version,
        f"{versions.LWS_MODULE}/cmd",
        f"-X sigs.k8s.io/lws/pkg/version.GitVersion={version}",
    )


def ensure_helm(*, log: bool = True) -> Path:
    """The pinned ``helm`` binary."""
    return ensure_tool(helm_tool(), log=log)


def ensure_tool(tool: GoTool, *, log: bool = True) -> Path:
    """Build ``tool`` into the cache unless it is there; several processes may ask at once."""
    binary = tool.path()
    if os.access(binary, os.X_OK):
        return binary
    target = binary.parent
    target.mkdir(parents=True, exist_ok=True)
    with (target.parent / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.access(binary, os.X_OK):
            _build_tool(tool, target, log=log)
    return binary


def _build_tool(tool: GoTool, target: Path, *, log: bool) -> None:
    # Not ``go install pkg@version``: that asks the proxy for the module's version list (to
    # report deprecation), which the proxy refuses for sigs.k8s.io/lws. A module that requires
    # the tool's module at its tag builds the same thing: the tool's go.mod lists every
    # dependency, and none of these modules has replace lines that would be lost.
    gomod = (
        f"module syncagent.local/build/{tool.name}\n\ngo 1.25\n\n"
        f"require {tool.module} {tool.version}\n"
    )
    _build(
        gomod,
        {tool.name: tool.package},
        target,
        f"{tool.name}-{tool.version}",
        ldflags=tool.ldflags,
        log=log,
    )


def _build_key(name: str) -> str:
    return f"{name}-{versions.KUBERNETES}-{versions.ETCD}"


def _kubernetes_module(kubernetes: str = versions.KUBERNETES) -> str:
    """A go.mod that requires k8s.io/kubernetes with its staging modules pinned by version."""
    upstream = (module_dir(versions.KUBERNETES_MODULE, kubernetes) / "go.mod").read_text()
    staging = sorted(set(_STAGING_REPLACE.findall(upstream)))
    pinned = versions.staging_version(kubernetes)
    replaces = "\n".join(f"\t{m} => {m} {pinned}" for m in staging)
    return (
        f"module syncagent.local/build/kubernetes\n\ngo 1.25\n\n"
        f"require {versions.KUBERNETES_MODULE} {kubernetes}\n\n"
        f"replace (\n{replaces}\n)\n"
    )


def _etcd_module() -> str:
    # etcd's own go.mod replaces its sibling modules with relative paths, which only work in
    # its repository; requiring them at the same tag does the same from the module proxy.
    siblings = ("api/v3", "client/pkg/v3", "client/v3", "pkg/v3")
    lines = [f"\t{versions.ETCD_MODULE} {versions.ETCD}"]
    lines += [f"\tgo.etcd.io/etcd/{s} {versions.ETCD}" for s in siblings]
    body = "\n".join(lines)
    return f"module syncagent.local/build/etcd\n\ngo 1.25\n\nrequire (\n{body}\n)\n"


def _kube_version_ldflags(kubernetes: str = versions.KUBERNETES) -> str:
    major, minor, _ = kubernetes.removeprefix("v").split(".", 2)
    pkg = "k8s.io/component-base/version"
    return " ".join(
        f"-X {pkg}.{k}={v}"
        for k, v in {
            "gitVersion": kubernetes,
            "gitMajor": major,
            "gitMinor": minor,
            "gitTreeState": "clean",
        }.items()
    )


def _build(
    gomod: str,
    outputs: dict[str, str],
    target: Path,
    key: str,
    *,
    ldflags: str = "",
    log: bool,
) -> None:
    workdir = cache_root() / "build" / key
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "go.mod").write_text(gomod)
    imports = "\n".join(f'\t_ "{p}"' for p in outputs.values())
    (workdir / "tools.go").write_text(
        f"//go:build tools\n\npackage tools\n\nimport (\n{imports}\n)\n"
    )
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod -buildvcs=false"}
    _run([go_binary(), "mod", "tidy"], cwd=workdir, env=env, log=log)
    flags = f"-s -w {ldflags}".strip()
    for binary, package in outputs.items():
        # One build per binary: ``-o`` names the file, and the build cache shares the packages.
        out = target / f".{binary}.partial"
        _run(
            [go_binary(), "build", "-trimpath", f"-ldflags={flags}", "-o", str(out), package],
            cwd=workdir,
            env=env,
            log=log,
        )
        out.rename(target / binary)


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str], log: bool) -> None:
    if log:
        print(f"dev-cluster: {' '.join(cmd[1:3])} in {cwd}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GoModuleError(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stderr.strip()[-4000:]}")
