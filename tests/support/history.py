"""Reaching a host-process agent's history port as the aggregated API the chart registers (no
tests here).

The API server proxies ``/apis/history.syncagent.io/v1alpha1`` to an address of the
APIService's Service (``--enable-aggregator-routing``: the endpoint's address, no kube-proxy
here), and Endpoints validation refuses loopback addresses. So the agent binds its history port
to a non-loopback address of this machine (:func:`host_address`), and :func:`expose` writes what
a cluster would have for an agent pod: a Pod whose status carries that address (no kubelet or
kwok node gets it, so nothing changes it), a selector-less Service and its Endpoints.
:func:`aggregated` adds the serving pair and the APIService whose ``caBundle`` trusts it. Used by
the cluster and e2e tiers.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from syncagent.runtime.selfsigned import self_signed
from tests.support.kube import Kube
from tests.support.polling import eventually

PORT_NAME = "history"
SERVICE_LABEL = "kubernetes.io/service-name"


def _usable(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((address, 0))
        except OSError:
            return False
    return True


def _routed() -> list[str]:
    """The source address of a route out (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))
            return [s.getsockname()[0]]
        except OSError:
            return []


def _listed() -> list[str]:
    """Every IPv4 address ``ip -4 -o addr`` lists."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            ["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, timeout=10
        ).stdout
        return [line.split()[3].split("/")[0] for line in out.splitlines() if " inet " in line]
    return []


def host_address() -> str:
    """A non-loopback IPv4 address of this machine that a socket can bind."""
    for address in (*_routed(), *_listed()):
        if _usable(address):
            return address
    raise AssertionError(
        "no non-loopback IPv4 address on this machine: the service-proxy tests need one "
        "(EndpointSlices refuse loopback addresses); `ip -4 addr` lists what there is"
    )


def free_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def _agent_pod(kube: Kube, ns: str, name: str, address: str) -> dict[str, Any]:
    pod = kube.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns},
            # A scheduler of no one's: on the simulated full cluster kube-scheduler would bind it
            # to a kwok node, and kwok would write its own address into the status.
            "spec": {
                "schedulerName": "none",
                "containers": [{"name": "agent", "image": "syncagent"}],
            },
        }
    )
    pod["status"] = {"podIP": address, "podIPs": [{"ip": address}]}
    return kube.request("PUT", kube.path("Pod", ns, name, "status"), pod)


def expose(kube: Kube, ns: str, name: str, address: str, port: int) -> None:
    """Service ``ns/name`` (port ``history``) in front of ``address:port``."""
    pod = _agent_pod(kube, ns, f"{name}-agent", address)
    target = {"kind": "Pod", "namespace": ns, "name": pod["metadata"]["name"]}
    target["uid"] = pod["metadata"]["uid"]
    ports = [{"name": PORT_NAME, "port": port, "protocol": "TCP"}]
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"ports": [{**ports[0], "targetPort": port}]},
        }
    )
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": name, "namespace": ns},
        "subsets": [{"addresses": [{"ip": address, "targetRef": target}], "ports": ports}],
    }
    kube.request("POST", f"/api/v1/namespaces/{ns}/endpoints", endpoints)
    # The aggregator reads EndpointSlices; no mirroring controller runs here to make this one.
    kube.request(
        "POST",
        f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": ns, "labels": {SERVICE_LABEL: name}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [address], "targetRef": target}],
            "ports": ports,
        },
    )


APISERVICE = "v1alpha1.history.syncagent.io"
API = "/apis/history.syncagent.io/v1alpha1"


def _conditions(kube: Kube) -> list[dict[str, Any]]:
    found = kube.request("GET", f"/apis/apiregistration.k8s.io/v1/apiservices/{APISERVICE}")
    return list((found.get("status") or {}).get("conditions") or [])


def _available(kube: Kube) -> bool:
    return any(c["type"] == "Available" and c["status"] == "True" for c in _conditions(kube))


@contextlib.contextmanager
def aggregated(kube: Kube, ns: str, name: str, cert_dir: Path) -> Iterator[tuple[str, ...]]:
    """Service ``ns/name`` and APIService :data:`APISERVICE` for an agent on this machine;
    yields the agent's flags. The APIService (cluster-wide) is deleted on the way out."""
    address = host_address()
    port = free_port(address)
    expose(kube, ns, name, address, port)
    cert, key = self_signed(f"{name}.{ns}.svc")  # the name the API server checks
    cert_dir.mkdir(parents=True, exist_ok=True)
    (cert_dir / "tls.crt").write_bytes(cert)
    (cert_dir / "tls.key").write_bytes(key)
    spec = {
        "group": "history.syncagent.io",
        "version": "v1alpha1",
        "service": {"namespace": ns, "name": name, "port": port},
        "caBundle": base64.b64encode(cert).decode(),
        "groupPriorityMinimum": 1000,
        "versionPriority": 15,
    }
    doc = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService"}
    kube.request(
        "POST",
        "/apis/apiregistration.k8s.io/v1/apiservices",
        {**doc, "metadata": {"name": APISERVICE}, "spec": spec},
    )
    try:
        yield ("--history-bind-address", f"{address}:{port}", "--history-cert-dir", str(cert_dir))
    finally:
        kube.request("DELETE", f"/apis/apiregistration.k8s.io/v1/apiservices/{APISERVICE}")


def wait_available(kube: Kube, *, deadline: float = 60.0) -> None:
    try:
        eventually(lambda: _available(kube), deadline=deadline, what=f"APIService {APISERVICE}")
    except AssertionError as err:
        raise AssertionError(f"{err}; its conditions: {_conditions(kube)}") from None


def history_path(ns: str, name: str = "") -> str:
    return f"{API}/namespaces/{ns}/ownershiphistories" + (f"/{name}" if name else "")
