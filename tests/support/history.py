"""Reaching a host-process agent's history port through the API server's service proxy (no
tests here).

The API server proxies ``services/NAME:PORT/proxy`` to an address of the Service's Endpoints,
only one that is a pod's (its ``targetRef`` names a pod of the namespace whose
``status.podIPs`` hold the address), and Endpoints validation refuses loopback addresses. So
the agent binds its history port to a non-loopback address of this machine
(:func:`host_address`), and :func:`expose` writes what a cluster would have for an agent pod: a
Pod whose status carries that address (no kubelet or kwok node gets it, so nothing changes it), a
selector-less Service and its Endpoints. Used by the cluster and e2e tiers.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import subprocess
from typing import Any

import orjson

from tests.support.kube import Kube

PORT_NAME = "history"


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


def served(kube: Kube, ns: str, name: str, query: dict[str, str]) -> Any:
    """What the agent answers through the service proxy (the raw ``/history`` document)."""
    path = f"/api/v1/namespaces/{ns}/services/{name}:{PORT_NAME}/proxy/history"
    response = kube.http.request("GET", path, params=query)
    if response.status_code != 200:
        raise AssertionError(f"HTTP {response.status_code} from {path}: {response.text[:300]}")
    return orjson.loads(response.content)
