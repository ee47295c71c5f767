"""The real Grove operator on loopback, built from a source tarball the user supplies.

The Go module proxy refuses ``github.com/ai-dynamo/grove/operator`` and two of its requirements
(the KAI and Volcano scheduler APIs), so nothing here downloads Grove's code: the tarball named
by :data:`versions.GROVE_SOURCE` (``$SYNCAGENT_REFERENCE/source`` or an explicit path) is checked
against its pinned sha256, extracted into the cache, and built without the two scheduler
backends that import the refused modules (the default kube-scheduler backend stays). The
project never vendors Grove's code: the only change is made to the extracted copy.

As with the LWS manager, a real install runs the operator in a pod behind a Service; here it is a
host process, and its webhook configurations are the chart's own (``helm template`` of the
source's ``charts/``) with ``clientConfig`` turned into a ``url`` on 127.0.0.1 and our CA.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import yaml

from syncagent.devcluster import versions
from syncagent.devcluster.build import cache_root
from syncagent.devcluster.gomod import GoModuleError, go_binary

REGISTRY_GO = "internal/scheduler/registry/registry.go"
BACKEND_IMPORT = "github.com/ai-dynamo/grove/operator/internal/scheduler/"
NAMESPACE = "grove-system"
# The chart's Deployment sets it; pods of cliques with a startup order get this init container.
INIT_CONTAINER_IMAGE = "grove-initc"
WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
# The CRDs the operator needs beyond the three every cluster serves (crds.GROVE_FILES).
OPERATOR_CRDS = (
    "operator/api/core/v1alpha1/crds/grove.io_clustertopologybindings.yaml",
    "scheduler/api/core/v1alpha1/crds/scheduler.grove.io_podgangs.yaml",
)


class GroveSourceError(RuntimeError):
    """The Grove source tarball is missing or is not the pinned one."""


def default_reference() -> Path:
    # Next to a checkout, where CI and the team keep it; an installed syncagent finds none.
    return Path(__file__).resolve().parents[3] / "shared" / "reference"


def find_source(explicit: Path | None = None) -> Path | None:
    """The tarball to build from: ``explicit``, else ``$SYNCAGENT_REFERENCE/source``'s (default
    ``../shared/reference`` next to the checkout) when it exists, else ``None``."""
    if explicit is not None:
        return explicit
    root = Path(os.environ.get("SYNCAGENT_REFERENCE") or default_reference())
    path = root / "source" / versions.GROVE_SOURCE
    return path if path.is_file() else None


def check_source(tarball: Path) -> None:
    if not tarball.is_file():
        raise GroveSourceError(
            f"{tarball}: no such file; name the Grove {versions.GROVE} source tarball "
            f"({versions.GROVE_SOURCE}, a git archive of the tag's operator and scheduler folders)"
        )
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    if digest != versions.GROVE_SOURCE_SHA256:
        raise GroveSourceError(
            f"{tarball}: sha256 {digest} is not the pinned {versions.GROVE_SOURCE_SHA256} "
            f"(Grove {versions.GROVE}, syncagent/devcluster/versions.py); use that tarball"
        )


def binary_path() -> Path:
    omitted = "-".join(versions.GROVE_OMITTED_BACKENDS)
    folder = f"grove-operator-{versions.GROVE}_without-{omitted}"
    return cache_root() / "bin" / folder / "grove-operator"


def ensure_grove_operator(tarball: Path, *, log: bool = True) -> Path:
    """The operator binary, built into the cache unless it is there (one build at a time)."""
    check_source(tarball)
    binary = binary_path()
    if os.access(binary, os.X_OK):
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    with (binary.parent.parent / f"{binary.parent.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.access(binary, os.X_OK):
            _build(tarball, binary, log=log)
    return binary


def extract(tarball: Path, target: Path) -> Path:
    """A fresh copy of the source under ``target``; returns the tag's top folder."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(target, filter="data")
    (top,) = [p for p in target.iterdir() if p.is_dir()]
    return top


def _build(tarball: Path, binary: Path, *, log: bool) -> None:
    top = extract(tarball, cache_root() / "build" / f"grove-operator-{versions.GROVE}")
    module = top / "operator"
    registry = module / REGISTRY_GO
    registry.write_text(without_backends(registry.read_text(), versions.GROVE_OMITTED_BACKENDS))
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod -buildvcs=false"}
    drops = [f"-droprequire={m}" for m in versions.GROVE_OMITTED_BACKENDS.values()]
    _go(["mod", "edit", *drops], module, env=env, log=log)
    stamp = f"-X github.com/ai-dynamo/grove/operator/internal/version.gitVersion={versions.GROVE}"
    partial = binary.parent / f".{binary.name}.partial"
    build = ["build", "-trimpath", f"-ldflags=-s -w {stamp}", "-o", str(partial), "./cmd"]
    _go(build, module, env=env, log=log)
    partial.rename(binary)


def without_backends(source: str, backends: dict[str, str]) -> str:
    """``registry.go`` without the named scheduler backends: their import goes, and their
    profile fails with a message instead of constructing them."""
    for name in backends:
        imp = f'\t"{BACKEND_IMPORT}{name}"\n'
        call = re.compile(rf"^(\s*)b = {name}\.New\([^)\n]*\)$", re.MULTILINE)
        if source.count(imp) != 1 or len(call.findall(source)) != 1:
            raise GroveSourceError(
                f"{REGISTRY_GO}: the {name} backend is not imported and constructed exactly once "
                "as this build expects; the source is not the pinned Grove release"
            )
        refusal = (
            f'return nil, fmt.Errorf("scheduler profile %q: this build leaves out the {name} '
            'backend (its Go module is not served by the module proxy)", p.Name)'
        )
        source = call.sub(lambda m, r=refusal: m[1] + r, source.replace(imp, ""))
    return source


def _go(args: list[str], cwd: Path, *, env: dict[str, str], log: bool) -> None:
    if log:
        print(f"dev-cluster: go {' '.join(args[:2])} in {cwd}", file=sys.stderr, flush=True)
    proc = subprocess.run(
        [go_binary(), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise GoModuleError(f"go {' '.join(args)} failed in {cwd}:\n{proc.stderr.strip()[-4000:]}")


def config_file(*, ports: dict[str, int], cert_dir: Path) -> str:
    """The operator's ``--config`` (``OperatorConfiguration``): the chart's defaults, except
    loopback addresses, certificates we supply, no leader election, the kube-scheduler backend
    alone. ``ports`` names ``webhooks``, ``healthProbes`` and ``metrics``."""
    server: dict[str, Any] = {
        name: {"bindAddress": "127.0.0.1", "port": port} for name, port in ports.items()
    }
    server["webhooks"] |= {"serverCertDir": str(cert_dir), "certProvisionMode": "manual"}
    syncs = {"concurrentSyncs": 3}
    config = {
        "apiVersion": "operator.config.grove.io/v1alpha1",
        "kind": "OperatorConfiguration",
        "runtimeClientConnection": {"qps": 100, "burst": 150},
        "leaderElection": {"enabled": False},
        "server": server,
        "controllers": {k: syncs for k in ("podCliqueSet", "podClique", "podCliqueScalingGroup")},
        "scheduler": {
            "profiles": [{"name": "default-scheduler"}],
            "defaultProfileName": "default-scheduler",
        },
        "logLevel": "info",
        "logFormat": "json",
        "topologyAwareScheduling": {"enabled": False},
        "authorizer": {"enabled": False},
        "network": {"autoMNNVLEnabled": False},
    }
    return yaml.safe_dump(config)


def command(binary: Path, *, config: Path) -> list[str]:
    return [str(binary), f"--config={config}"]


def environment(kubeconfig: Path) -> dict[str, str]:
    return {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "GROVE_INIT_CONTAINER_IMAGE": INIT_CONTAINER_IMAGE,
    }


def chart_webhooks(top: Path, *, helm: Path) -> list[dict[str, Any]]:
    """The webhook configurations ``helm template`` renders from the source's chart."""
    proc = subprocess.run(
        [str(helm), "template", "grove", str(top / "operator" / "charts"), "-n", NAMESPACE],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise GroveSourceError(f"helm template of Grove's chart failed: {proc.stderr[-2000:]}")
    return [d for d in yaml.safe_load_all(proc.stdout) if d and d.get("kind") in WEBHOOK_KINDS]


def on_loopback(docs: list[dict[str, Any]], *, port: int, ca_pem: bytes) -> list[dict[str, Any]]:
    """``docs`` calling ``https://127.0.0.1:port`` at each service's path, trusting ``ca_pem``."""
    for doc in docs:
        for hook in doc["webhooks"]:
            service = hook["clientConfig"].pop("service")
            hook["clientConfig"] = {
                "url": f"https://127.0.0.1:{port}{service['path']}",
                "caBundle": base64.b64encode(ca_pem).decode(),
            }
    return docs


def defaulting_probe() -> dict[str, Any]:
    """A PodCliqueSet without ``terminationDelay``: Grove's defaulting webhook fills it in."""
    clique = {
        "name": "c",
        "spec": {
            "roleName": "c",
            "replicas": 1,
            "podSpec": {"containers": [{"name": "c", "image": "probe"}]},
        },
    }
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": "webhook-probe"},
        "spec": {"replicas": 1, "template": {"cliques": [clique]}},
    }
