"""The real upstream Dynamo operator as a process against the simulated cluster (no tests here).

Built from ``cmd/main.go`` of the snapshot in ``$SYNCAGENT_REFERENCE/source`` exactly as the
differential harness is (``tests/support/upstream_source.py``: extracted in the cache, the
snapshot API module through a ``replace``, cached by the tarballs' sha256). It runs with:

- a config file of its ``operator.config.dynamo.nvidia.com/v1alpha1`` ``OperatorConfiguration``
  (:func:`operator_config`): restricted to the test's namespace, every port a free loopback port,
  leader election off, GPU discovery off, an MPI SSH secret name (validation requires one);
- the snapshot's CRDs (:mod:`tests.e2e.support.upstream_crds`);
- no webhook registered with the API server: ``certProvisionMode: manual`` with ``certDir`` the
  simulated cluster's loopback webhook certificate (the manager always starts its webhook server
  and waits for ``tls.crt``/``tls.key`` there), and no Validating/MutatingWebhookConfiguration is
  created and no CA is injected, so the API server never calls it. Upstream's defaulting and
  validating webhooks therefore do not run: a graph must be valid and complete as written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import yaml

from syncagent.devcluster.build import cache_root
from syncagent.devcluster.controlplane import free_port
from tests.support import testlogs
from tests.support.polling import eventually
from tests.support.upstream_source import (
    BuildReport,
    cached_binary,
    extracted_module,
    go_build,
    tarball_digests,
)

# Its image's name for it (upstream's Dockerfile: ``go build -o manager``): client-go names an
# Update's field manager after the binary, so the takeover meets the entries a real install has.
BINARY = "manager"
MAIN_PACKAGE = "cmd"
CONFIG_API = "operator.config.dynamo.nvidia.com/v1alpha1"
MPI_SSH_SECRET = "mpi-run-ssh-secret"
READY_DEADLINE = 120.0
FIGURES = "upstream operator (ms)"  # the figures table (tests/support/figures.py)
# It must be semver (main.go exits otherwise); only its webhooks, not registered here, read it.
VERSION_FLAG = "--operator-version=0.0.0-2a6da14c8"
# Its cert manager reads its own namespace from the ServiceAccount mount of a pod, in every
# cert mode, and exits without it (internal/cert getOperatorNamespace). The operator runs in a
# private mount namespace (an unprivileged user namespace, so root is not needed) with a tmpfs
# over /run holding that one file: nothing is written on the host, and the process keeps the
# host's network, so it reaches the API server on loopback. ``exec`` keeps one pid throughout,
# so a signal sent to the Popen reaches the operator.
IN_POD = [
    "unshare",
    "--user",
    "--map-root-user",
    "--mount",
    "sh",
    "-c",
    'mount -t tmpfs tmpfs /run && mkdir -p "${0%/*}" && printf %s "$1" > "$0" && shift && exec "$@"',
    "/run/secrets/kubernetes.io/serviceaccount/namespace",
]


def build_key(source: Path) -> str:
    """The cache key: both tarballs (``cmd/main.go`` is inside the operator tarball)."""
    return (
        "operator-2a6da14c8-"
        + hashlib.sha256("".join(tarball_digests(source)).encode()).hexdigest()[:20]
    )


def ensure_operator(source: Path) -> BuildReport:
    """Upstream's operator binary for the tarballs in ``source``, built unless cached."""
    target = cache_root() / "upstream-operator" / build_key(source)

    def build(into: Path) -> None:
        module = extracted_module(source, into, log="upstream operator")
        go_build(module, MAIN_PACKAGE, into, BINARY, log="upstream operator")

    return cached_binary(target, BINARY, build)


def operator_config(
    namespace: str, *, cert_dir: Path, ports: OperatorPorts, lws: bool = False
) -> dict[str, Any]:
    """Upstream's ``OperatorConfiguration`` for one test namespace; unset fields take its defaults
    (``api/config/v1alpha1/defaults.go``), which its loader applies before validating."""
    config: dict[str, Any] = {
        "apiVersion": CONFIG_API,
        "kind": "OperatorConfiguration",
        "server": {
            # The defaults bind 0.0.0.0:8080/8081/9443; every program of the cluster is loopback
            # only, and other operators or tests may hold those ports.
            "metrics": {"bindAddress": "127.0.0.1", "port": ports.metrics, "secure": False},
            "healthProbe": {"bindAddress": "127.0.0.1", "port": ports.health},
            "webhook": {
                "host": "127.0.0.1",
                "port": ports.webhook,
                "certDir": str(cert_dir),
                # manual: no Secret, no CA injected into any webhook configuration or CRD; the
                # server only needs tls.crt/tls.key in certDir to start.
                "certProvisionMode": "manual",
            },
        },
        "leaderElection": {"enabled": False},
        # Restricted mode: its cache and its scope-marker Lease stay in the test's namespace.
        "namespace": {"restricted": namespace},
        # Validation requires both; the secret is only read for multinode mpirun graphs.
        "mpi": {"sshSecretName": MPI_SSH_SECRET, "sshSecretNamespace": namespace},
        # Off: it would read node GPU labels that kwok's nodes do not carry as GFD sets them.
        "gpu": {"discoveryEnabled": False},
    }
    if lws:
        # Auto-detection wants Volcano beside LWS (internal/features/gates.go); enabled
        # explicitly, it still checks both API groups are served (takeover.volcano_group_served).
        config["orchestrators"] = {"lws": {"enabled": True}}
    return config


@dataclass(frozen=True, slots=True)
class OperatorPorts:
    metrics: int
    health: int
    webhook: int

    @classmethod
    def free(cls) -> OperatorPorts:
        return cls(metrics=free_port(), health=free_port(), webhook=free_port())


@dataclass(slots=True)
class UpstreamOperator:
    """One running operator process; :func:`running_operator` starts and stops it."""

    process: subprocess.Popen[bytes]
    log: Path
    ports: OperatorPorts
    namespace: str
    started_seconds: float = 0.0  # from spawn to ready

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise OperatorError(f"upstream operator exited {self.process.returncode}", self)
        try:
            answer = httpx2.get(f"http://127.0.0.1:{self.ports.health}/readyz", timeout=2.0)
        except httpx2.TransportError:
            return False
        # readyz answers once the manager runs; the DGD controller's workers start after its
        # caches synced, which is when a graph gets served.
        return answer.status_code == 200 and _workers_started(self.log_text())

    def stop(self, *, grace: float = 20.0) -> int:
        """SIGTERM (its manager shuts down gracefully), SIGKILL after ``grace`` seconds."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


class OperatorError(AssertionError):
    """The operator failed to start or died; the message ends with its log's last lines."""

    def __init__(self, message: str, operator: UpstreamOperator) -> None:
        tail = "\n".join(operator.log_text().splitlines()[-40:])
        super().__init__(f"{message}; log {operator.log} ends:\n{tail}")


def _workers_started(log: str) -> bool:
    return any(
        "Starting workers" in line and '"dynamographdeployment"' in line.lower()
        for line in log.splitlines()
    )


@contextlib.contextmanager
def running_operator(
    binary: Path, kubeconfig: Path, namespace: str, *, cert_dir: Path, lws: bool = False
) -> Iterator[UpstreamOperator]:
    """Upstream's operator serving ``namespace`` until the block ends; ready when it yields."""
    ports = OperatorPorts.free()
    config = operator_config(namespace, cert_dir=cert_dir, ports=ports, lws=lws)
    log = testlogs.kept_file("upstream-operator") or Path(
        tempfile.mkstemp(prefix="upstream-operator-", suffix=".log")[1]
    )
    config_file = log.with_suffix(".config.yaml")
    config_file.write_text(yaml.safe_dump(config))
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*IN_POD, namespace, str(binary), f"--config={config_file}", VERSION_FLAG],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    operator = UpstreamOperator(process, log, ports, namespace)
    try:
        try:
            eventually(operator.ready, deadline=READY_DEADLINE, what="the operator ready")
        except OperatorError:
            raise
        except AssertionError as err:
            raise OperatorError(str(err), operator) from None
        operator.started_seconds = time.monotonic() - started
        yield operator
    finally:
        operator.stop()
