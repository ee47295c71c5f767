"""The wait-for-leader ConfigMap of a graph: a script a vLLM ``mp`` worker's init container runs.

An ``mp`` worker started before its leader's master port listens fails its rendezvous, so it
waits first: until the leader pod behind ``LEADER_HOST`` is Running and not terminating (asked
of the API server with the pod's ServiceAccount, which the discovery Role lets read pods), then
until ``LEADER_PORT`` accepts a TCP connection. Without API access it waits on TCP alone.

One ConfigMap per graph (``<graph>-wait-leader-script``), created while the graph has a
multinode component, as upstream does. Upstream creates none for a standalone DCD, whose ``mp``
workers then wait for a volume that never comes; we create one, owned by the DCD, exactly when
its worker template mounts it (our design).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fieldmanagers import waitleader
from syncagent.kube.objects import OwnerRef
from syncagent.render import labels as L
from syncagent.render.model import Rendered, build

SUFFIX = "wait-leader-script"
SCRIPT_KEY = "wait-for-leader.py"
VOLUME = "wait-leader-script"
SCRIPT_MOUNT = "/scripts"

SCRIPT = """\
import json
import os
import socket
import ssl
import time
import urllib.request

ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
HOST = os.environ["LEADER_HOST"]
PORT = int(os.environ["LEADER_PORT"])
API = "https://kubernetes.default.svc/api/v1/namespaces/{namespace}/pods"


def read(name):
    with open(os.path.join(ACCOUNT, name)) as f:
        return f.read().strip()


def pods_with_ip(ip):
    url = API.format(namespace=read("namespace")) + "?fieldSelector=status.podIP=" + ip
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + read("token")})
    context = ssl.create_default_context(cafile=os.path.join(ACCOUNT, "ca.crt"))
    with urllib.request.urlopen(request, context=context, timeout=5) as response:
        return json.load(response).get("items") or []


def leader_pod_is_healthy(ip):
    \"\"\"(healthy, reason): the pod owning ip is Running and has no deletionTimestamp.\"\"\"
    try:
        pods = pods_with_ip(ip)
    except Exception as err:  # no token, no RBAC, no API: the TCP check alone decides
        return True, "API server unavailable (%s), checking TCP only" % err
    if not pods:
        return False, "no pod has IP " + ip
    meta, status = pods[0].get("metadata") or {}, pods[0].get("status") or {}
    name = meta.get("name", "?")
    if meta.get("deletionTimestamp"):
        return False, "pod %s is terminating" % name
    if status.get("phase") != "Running":
        return False, "pod %s is %s" % (name, status.get("phase"))
    return True, "pod %s is Running" % name


def leader_ready():
    try:
        ip = socket.gethostbyname(HOST)
    except OSError as err:
        return False, "cannot resolve %s: %s" % (HOST, err)
    healthy, reason = leader_pod_is_healthy(ip)
    if not healthy:
        return False, reason
    try:
        socket.create_connection((ip, PORT), timeout=2).close()
    except OSError as err:
        return False, "%s:%d does not accept connections: %s" % (ip, PORT, err)
    return True, reason


print("waiting for the leader at %s:%d" % (HOST, PORT), flush=True)
time.sleep(5)
started = last_report = time.monotonic()
while True:
    ready, reason = leader_ready()
    now = time.monotonic()
    if ready:
        print("leader ready after %.0fs (%s)" % (now - started, reason), flush=True)
        break
    if now - last_report >= 30:
        print("still waiting after %.0fs: %s" % (now - started, reason), flush=True)
        last_report = now
    time.sleep(5)
"""


def config_map_name(parent: str) -> str:
    return f"{parent}-{SUFFIX}"


def wait_leader_config_map(parent: str, *, namespace: str, owner: OwnerRef) -> Rendered:
    """The ConfigMap, labelled with the graph name (upstream's label) and controlled by ``owner``."""
    return build(
        manager=waitleader.MANAGER.name,
        api_version="v1",
        kind="ConfigMap",
        name=config_map_name(parent),
        namespace=namespace,
        labels={L.GRAPH_NAME: parent},
        owner=owner,
        data={SCRIPT_KEY: SCRIPT},
    )


def mounts_wait_leader(workload: Mapping[str, Any]) -> bool:
    """Whether a rendered LeaderWorkerSet's worker pods mount the wait-for-leader script."""
    template = ((workload.get("spec") or {}).get("leaderWorkerTemplate") or {}).get(
        "workerTemplate"
    ) or {}
    volumes = (template.get("spec") or {}).get("volumes") or []
    return any(v.get("name") == VOLUME for v in volumes)
