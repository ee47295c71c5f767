"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager.

The API server runs with client-certificate authentication, RBAC, ServiceAccount token signing,
the ``OwnerReferencesPermissionEnforcement`` admission plugin and an audit log of every
ServiceAccount request (``audit.py``). The controller manager runs
only the garbage collector and the namespace controller, so owner references cascade and
namespaces finish deleting as on a real cluster, while nothing else acts on workloads.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx2
import orjson
import yaml

from syncagent.devcluster import audit, crds, pki, procs, versions
from syncagent.devcluster.build import Binaries, ensure_binaries

FIELD_MANAGER = "syncagent/dev-cluster"
_STARTUP_DEADLINE = 180.0


class ControlPlaneError(RuntimeError):
    """The control plane did not come up; the message names the component and its log."""


class ControlPlane:
    """Start with ``start()`` or ``with ControlPlane(...) as cp:``; ``stop()`` leaves nothing behind."""

    # Nothing here creates the namespaces' default ServiceAccounts, which the ServiceAccount
    # admission plugin requires of every pod.
    disabled_admission: tuple[str, ...] = ("ServiceAccount",)

    def __init__(
        self,
        *,
        lws_version: str = versions.DEFAULT_LWS,
        extra_crds: Iterable[Path] = (),
        workdir: Path | None = None,
        binaries: Binaries | None = None,
    ) -> None:
        if lws_version not in versions.LWS_VERSIONS:
            raise ValueError(f"lws_version {lws_version!r} is not one of {versions.LWS_VERSIONS}")
        self.lws_version = lws_version
        self.extra_crds = list(extra_crds)
        self._own_workdir = workdir is None
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="syncagent-cp-"))
        self._binaries = binaries
        self._procs: list[subprocess.Popen[bytes]] = []
        self.server = ""
        self.etcd_url = ""
        self.version = ""
        self.kubeconfig = self.workdir / "kubeconfig"
        # Every ServiceAccount request the API server answered (``devcluster.audit``).
        self.audit_log = audit.log_path(self.workdir)
        self.pki: pki.Pki | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        # Reverse order: the controller manager and API server go before their storage.
        while self._procs:
            procs.stop(self._procs.pop())
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    def _start(self) -> None:
        binaries = self._binaries or ensure_binaries()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pki = pki.generate(self.workdir / "pki")
        self.etcd_url = self._start_etcd(binaries)
        port = free_port()
        self.server = f"https://127.0.0.1:{port}"
        self._start_apiserver(binaries, etcd_url=self.etcd_url, port=port)
        self._write_kubeconfig()
        with self._http() as http:
            poll(
                lambda: answers_ok(http, "/readyz"),
                what="kube-apiserver /readyz",
                log=self._log("kube-apiserver"),
            )
            self.version = http.get("/version").json()["gitVersion"]
            kinds = self._install_crds(http)
            self._start_controllers(binaries, http)
            poll(
                lambda: self._owner_refs_admitted(http, kinds),
                what="blockOwnerDeletion admission for every installed custom resource",
                log=self._log("kube-apiserver"),
            )

    # -- components --------------------------------------------------------------------------

    def _log(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def _spawn(
        self, name: str, cmd: list[str], *, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        proc = procs.spawn(cmd, log=self._log(name), env=env)
        self._procs.append(proc)
        return proc

    def _start_etcd(self, binaries: Binaries) -> str:
        client, peer = free_port(), free_port()
        url = f"http://127.0.0.1:{client}"
        self._spawn(
            "etcd",
            [
                str(binaries.etcd),
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={url}",
                f"--advertise-client-urls={url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=default=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
        )
        with httpx2.Client(base_url=url, timeout=2.0) as http:
            poll(lambda: answers_ok(http, "/health"), what="etcd /health", log=self._log("etcd"))
        return url

    def _start_apiserver(self, binaries: Binaries, *, etcd_url: str, port: int) -> None:
        self._spawn(
            "kube-apiserver",
            [str(binaries.kube_apiserver), *self._apiserver_args(etcd_url=etcd_url, port=port)],
        )

    def _apiserver_args(self, *, etcd_url: str, port: int) -> list[str]:
        assert self.pki is not None
        p = self.pki
        return [
            f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.workdir / 'apiserver-certs'}",
            f"--tls-cert-file={p.serving_cert}",
            f"--tls-private-key-file={p.serving_key}",
            f"--client-ca-file={p.ca_cert}",
            "--authorization-mode=RBAC",
            "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
            f"--service-account-key-file={p.sa_pub}",
            f"--service-account-signing-key-file={p.sa_key}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--allow-privileged=true",
            *_aggregation_args(p),
            "--v=1",
            *[f"--disable-admission-plugins={name}" for name in self.disabled_admission],
            *audit.apiserver_args(self.workdir),
        ]

    def _start_controllers(self, binaries: Binaries, http: httpx2.Client) -> None:
        """What acts on objects once the API server and CRDs are up: here only the garbage
        collector and the namespace controller."""
        self._spawn(
            "kube-controller-manager",
            [
                str(binaries.kube_controller_manager),
                f"--kubeconfig={self.kubeconfig}",
                "--controllers=garbage-collector-controller,namespace-controller",
                "--leader-elect=false",
                "--secure-port=0",
                "--concurrent-gc-syncs=20",
                "--v=1",
            ],
        )

    def _write_kubeconfig(self) -> None:
        assert self.pki is not None
        write_kubeconfig(
            self.kubeconfig,
            server=self.server,
            ca=self.pki.ca_cert,
            cert=self.pki.admin_cert,
            key=self.pki.admin_key,
        )

    # -- API helpers -------------------------------------------------------------------------

    def _http(self, *, timeout: float = 30.0) -> httpx2.Client:
        assert self.pki is not None
        tls = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        tls.load_cert_chain(str(self.pki.admin_cert), str(self.pki.admin_key))
        return httpx2.Client(base_url=self.server, verify=tls, timeout=timeout)

    def crd_paths(self) -> list[Path]:
        return [*crds.lws_crds(self.lws_version), *crds.grove_crds(), *self.extra_crds]

    def _install_crds(self, http: httpx2.Client) -> list[dict[str, Any]]:
        """Apply every CRD, wait until all are Established, return one sample kind per CRD."""
        docs = [doc for path in self.crd_paths() for doc in _load_yaml(path) if doc]
        for doc in docs:
            apply(http, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", doc)
        for doc in docs:
            name = doc["metadata"]["name"]
            poll(lambda n=name: _established(http, n), what=f"CRD {name} Established", log=None)
            # Established comes before the resource's watch cache is ready; until then lists
            # answer 429 "storage is (re)initializing".
            poll(lambda d=doc: answers_ok(http, _list_path(d)), what=f"{name} listable", log=None)
        return [_sample_kind(doc) for doc in docs]

    def _owner_refs_admitted(self, http: httpx2.Client, kinds: list[dict[str, Any]]) -> bool:
        # Admission's REST mapper learns new types only on its periodic reset; a dry-run create
        # with blockOwnerDeletion fails until then, and so would the tests' first owner refs.
        for kind in kinds:
            probe = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "generateName": "owner-probe-",
                    "ownerReferences": [
                        {
                            **kind,
                            "name": "probe",
                            "uid": "00000000-0000-0000-0000-000000000001",
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
            }
            resp = http.post(
                "/api/v1/namespaces/default/configmaps", params={"dryRun": "All"}, json=probe
            )
            if resp.status_code != 201:
                return False
        return True

    def token_for(self, *, namespace: str, service_account: str, seconds: int = 3600) -> str:
        """A bound token of ``namespace/service_account`` (created if missing)."""
        with self._http() as http:
            sa = {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": service_account},
            }
            http.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json=sa)
            resp = http.post(
                f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
                json={
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenRequest",
                    "spec": {"expirationSeconds": seconds},
                },
            )
            resp.raise_for_status()
            return str(resp.json()["status"]["token"])

    def describe(self) -> str:
        return f"kube-apiserver {self.version} at {self.server} (LWS/DS CRDs {self.lws_version})"


# -- helpers ---------------------------------------------------------------------------------


def _aggregation_args(p: pki.Pki) -> list[str]:
    """The front proxy: what the API server presents to aggregated APIs and which headers carry
    the caller. No kube-proxy runs here, so it dials the APIService's endpoint address itself.
    No ``--requestheader-uid-headers``: 1.30 of the version matrix does not know it."""
    return [
        f"--requestheader-client-ca-file={p.front_proxy_ca_cert}",
        f"--requestheader-allowed-names={pki.FRONT_PROXY_CLIENT}",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={p.proxy_client_cert}",
        f"--proxy-client-key-file={p.proxy_client_key}",
        "--enable-aggregator-routing=true",
    ]


def apply(http: httpx2.Client, collection: str, doc: dict[str, Any]) -> None:
    """Server-side apply ``doc`` (cluster-scoped, under ``collection``) as the dev cluster."""
    name = doc["metadata"]["name"]
    resp = http.patch(
        f"{collection}/{name}",
        params={"fieldManager": FIELD_MANAGER, "force": "true"},
        content=orjson.dumps(doc),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    if resp.status_code >= 300:
        raise ControlPlaneError(f"{doc['kind']}/{name}: {resp.text[:2000]}")


def write_kubeconfig(path: Path, *, server: str, ca: Path, cert: Path, key: Path) -> None:
    """A kubeconfig whose one context authenticates with a client certificate."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "syncagent-dev",
                "cluster": {"server": server, "certificate-authority": str(ca)},
            }
        ],
        "users": [
            {"name": "user", "user": {"client-certificate": str(cert), "client-key": str(key)}}
        ],
        "contexts": [
            {"name": "syncagent-dev", "context": {"cluster": "syncagent-dev", "user": "user"}}
        ],
        "current-context": "syncagent-dev",
    }
    path.write_text(yaml.safe_dump(config))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def answers_ok(http: httpx2.Client, path: str) -> bool:
    try:
        return http.get(path).status_code == 200
    except httpx2.TransportError:
        return False


def _established(http: httpx2.Client, name: str) -> bool:
    resp = http.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    # A CRD just created may read back with "conditions": null.
    status = (resp.json().get("status") or {}) if resp.status_code == 200 else {}
    conditions = status.get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def _list_path(crd: dict[str, Any]) -> str:
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("served", True))
    return f"/apis/{spec['group']}/{version}/{spec['names']['plural']}?limit=1"


def _sample_kind(crd: dict[str, Any]) -> dict[str, str]:
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("served", True))
    return {"apiVersion": f"{spec['group']}/{version}", "kind": spec["names"]["kind"]}


def _load_yaml(path: Path) -> Sequence[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open() as f:
        return list(yaml.load_all(f, Loader=loader))


def poll(
    check: Callable[[], bool], *, what: str, log: Path | None, deadline: float = _STARTUP_DEADLINE
) -> None:
    end = time.monotonic() + deadline
    delay = 0.05
    while time.monotonic() < end:
        if check():
            return
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise ControlPlaneError(f"timed out after {deadline:.0f}s waiting for {what}\n{tail}")
