"""Helpers for the agent cluster tests (no tests here): the agent as a subprocess, its metrics,
raw API calls, simulated workload readiness, graphs to apply, and a fault-injecting TCP proxy.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import yaml
from lightkube import Client

from syncagent.devcluster.procs import die_with_parent

GROUP_PATH = "/apis/nvidia.com/v1beta1/namespaces/{ns}/{plural}"
PATHS = {
    "DynamoGraphDeployment": "/apis/nvidia.com/v1beta1/namespaces/{ns}/dynamographdeployments",
    "DynamoComponentDeployment": "/apis/nvidia.com/v1beta1/namespaces/{ns}/dynamocomponentdeployments",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "LeaderWorkerSet": "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{ns}/leaderworkersets",
    "Service": "/api/v1/namespaces/{ns}/services",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Event": "/api/v1/namespaces/{ns}/events",
    "Lease": "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
}
WRITE_VERBS = ("create", "patch", "update", "delete")


# -- polling -------------------------------------------------------------------------------------


def eventually(check: Callable[[], Any], *, deadline: float, what: str) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``deadline`` seconds."""
    start = time.monotonic()
    last: Any = None
    while True:
        try:
            last = check()
        except ApiFailure as err:
            last = err
        else:
            if last:
                return last
        if time.monotonic() - start > deadline:
            raise AssertionError(f"timed out after {deadline}s waiting for {what}; last: {last!r}")
        time.sleep(0.1)


# -- raw API -------------------------------------------------------------------------------------


class ApiFailure(Exception):
    def __init__(self, code: int, body: Any) -> None:
        super().__init__(f"HTTP {code}: {body}")
        self.code = code
        self.body = body


class Kube:
    """JSON requests through the admin lightkube client's HTTP connection."""

    def __init__(self, client: Any) -> None:
        self.http = client._client._client
        self.config = client._client.config

    def separate(self) -> Kube:
        """Another Kube on its own connections: for a thread, since one connection must never
        be read by two threads at once."""
        return Kube(Client(config=self.config))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        **params: str,
    ) -> Any:
        content = orjson.dumps(body) if body is not None else None
        response = self.http.request(
            method, path, content=content, headers={"Content-Type": content_type}, params=params
        )
        data = response.json() if response.content else None
        if response.status_code >= 400:
            raise ApiFailure(response.status_code, data)
        return data

    def path(self, kind: str, ns: str, name: str = "", sub: str = "") -> str:
        base = PATHS[kind].format(ns=ns)
        return "/".join(p for p in (base, name, sub) if p)

    def get(self, kind: str, ns: str, name: str) -> dict[str, Any] | None:
        try:
            return self.request("GET", self.path(kind, ns, name))
        except ApiFailure as err:
            if err.code == 404:
                return None
            raise

    def list(self, kind: str, ns: str) -> list[dict[str, Any]]:
        return self.request("GET", self.path(kind, ns))["items"]

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        ns = obj["metadata"]["namespace"]
        return self.request("POST", self.path(obj["kind"], ns), obj)

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        return self.request("PUT", self.path(obj["kind"], meta["namespace"], meta["name"]), obj)

    def merge(
        self,
        kind: str,
        ns: str,
        name: str,
        patch: dict[str, Any],
        *,
        sub: str = "",
        manager: str = "test-user",
    ) -> dict[str, Any]:
        return self.request(
            "PATCH",
            self.path(kind, ns, name, sub),
            patch,
            content_type="application/merge-patch+json",
            fieldManager=manager,
        )

    def delete(self, kind: str, ns: str, name: str) -> None:
        self.request("DELETE", self.path(kind, ns, name))

    def edit_graph(
        self, ns: str, name: str, change: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        """GET, change, PUT; retried on a write conflict (the agent writes status)."""
        for _ in range(20):
            graph = self.get("DynamoGraphDeployment", ns, name)
            assert graph is not None
            change(graph)
            try:
                return self.update(graph)
            except ApiFailure as err:
                if err.code != 409:
                    raise
        raise AssertionError(f"could not update DynamoGraphDeployment {ns}/{name}")


# -- inputs ----------------------------------------------------------------------------------------


def component(
    name: str, ctype: str, *, replicas: int = 1, multinode: bool = False, **extra: Any
) -> dict[str, Any]:
    main: dict[str, Any] = {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"}
    if ctype == "frontend":
        main["command"] = ["python3", "-m", "dynamo.frontend"]
    else:
        main["command"] = ["python3", "-m", "dynamo.vllm"]
        main["args"] = ["--model", "Qwen/Qwen3-0.6B"]
    out: dict[str, Any] = {
        "name": name,
        "type": ctype,
        "replicas": replicas,
        "podTemplate": {"spec": {"containers": [main]}},
    }
    if multinode:
        out["multinode"] = {"nodeCount": 2}
    out.update(extra)
    return out


def graph(
    ns: str, name: str, components: list[dict[str, Any]], **annotations: str
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"backendFramework": "vllm", "components": copy.deepcopy(components)},
    }


def example_graph(ns: str, name: str = "demo") -> dict[str, Any]:
    """Frontend + single-node decode + multinode prefill (an LWS)."""
    return graph(
        ns,
        name,
        [
            component("Frontend", "frontend"),
            component("decode", "decode", replicas=2),
            component("prefill", "prefill", multinode=True),
        ],
    )


# -- status ----------------------------------------------------------------------------------------


def condition(obj: dict[str, Any] | None, type_: str) -> dict[str, Any]:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == type_:
            return cond
    return {}


def ready_reason(kube: Kube, ns: str, name: str) -> str:
    return condition(kube.get("DynamoGraphDeployment", ns, name), "Ready").get("reason", "")


NOW = "2026-01-01T00:00:00Z"


def become_ready(kube: Kube, ns: str, name: str, *, deadline: float = 60.0) -> None:
    """Simulate workload readiness until the graph reports Ready (all resources ready)."""

    def ready() -> bool:
        simulate_ready(kube, ns)
        return ready_reason(kube, ns, name) == "all_resources_are_ready"

    eventually(ready, deadline=deadline, what=f"{name} to become Ready")


def simulate_ready(kube: Kube, ns: str) -> int:
    """Write a ready status on every Deployment and LeaderWorkerSet whose status is behind
    (there is no kubelet and no workload controller in this tier). Returns how many."""
    count = 0
    for kind, status_of, progress in (
        ("Deployment", _deployment_ready, "replicas"),
        ("LeaderWorkerSet", _lws_ready, "readyReplicas"),
    ):
        for obj in kube.list(kind, ns):
            meta, replicas = obj["metadata"], obj["spec"].get("replicas", 1)
            live = obj.get("status", {})
            if (
                live.get("observedGeneration") == meta["generation"]
                and live.get(progress) == replicas
            ):
                continue
            status = status_of(meta["generation"], replicas)
            kube.merge(
                kind, ns, meta["name"], {"status": status}, sub="status", manager="test-kubelet"
            )
            count += 1
    return count


def _deployment_ready(generation: int, replicas: int) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "simulated",
                "lastUpdateTime": NOW,
                "lastTransitionTime": NOW,
            }
        ],
    }


def _lws_ready(generation: int, replicas: int) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "readyReplicas": replicas,
        "updatedReplicas": replicas,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "AllGroupsReady",
                "message": "simulated",
                "lastTransitionTime": NOW,
            }
        ],
    }


def events_for(kube: Kube, ns: str, name: str, reason: str) -> list[dict[str, Any]]:
    return [
        e
        for e in kube.list("Event", ns)
        if e.get("involvedObject", {}).get("name") == name and e.get("reason") == reason
    ]


# -- the agent as a subprocess -------------------------------------------------------------------


def parse_metrics(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$", line)
        if not match:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        out[(match.group(1), labels)] = float(match.group(3))
    return out


class Metrics:
    """One scrape of ``/metrics``."""

    def __init__(self, text: str) -> None:
        self.samples = parse_metrics(text)

    def sum(self, name: str, **match: str) -> float:
        want = set(match.items())
        return sum(v for (n, labels), v in self.samples.items() if n == name and want <= labels)

    def requests(
        self,
        *,
        verbs: tuple[str, ...] | None = None,
        resource: str | None = None,
        dry_run: str | None = None,
        exclude: tuple[str, ...] = (),
    ) -> float:
        total = 0.0
        for (n, labels), v in self.samples.items():
            if n != "syncagent_api_requests_total":
                continue
            d = dict(labels)
            if verbs is not None and d.get("verb") not in verbs:
                continue
            if resource is not None and d.get("resource") != resource:
                continue
            if dry_run is not None and d.get("dry_run") != dry_run:
                continue
            if d.get("resource") in exclude:
                continue
            total += v
        return total

    def writes(
        self, *, resource: str | None = None, exclude: tuple[str, ...] = ("leases", "events")
    ) -> float:
        """Real (not dry-run) writes, Lease renewals and Events left out by default."""
        return self.requests(verbs=WRITE_VERBS, resource=resource, dry_run="false", exclude=exclude)


class Agent:
    """``syncagent run`` in a subprocess, JSON logs to a file, metrics on a free port."""

    def __init__(
        self,
        kubeconfig: Path | str,
        *args: str,
        namespace: str | None = None,
        leader_elect: bool = False,
    ) -> None:
        self.log = Path(tempfile.mkstemp(prefix="agent-", suffix=".log")[1])
        cmd = [
            sys.executable,
            "-m",
            "syncagent.cli.main",
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--capability",
            "grove=false",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "0",
        ]
        if namespace:
            cmd += ["--namespace", namespace]
        if not leader_elect:
            cmd.append("--no-leader-elect")
        cmd += list(args)
        self._stderr = self.log.open("wb")
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=die_with_parent,  # an interrupted run leaves no agent behind
        )
        self.port = eventually(self._port, deadline=30, what="the agent to serve /metrics")

    def _port(self) -> int | None:
        if self.proc.poll() is not None:
            raise AssertionError(
                f"agent exited with {self.proc.returncode}:\n{self.logs()[-4000:]}"
            )
        for line in self.logs().splitlines():
            if '"serving metrics and probes"' in line:
                return int(orjson.loads(line)["address"].rsplit(":", 1)[1])
        return None

    def logs(self) -> str:
        return self.log.read_text(errors="replace")

    def scrape(self) -> Metrics:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            return Metrics(r.read().decode())

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def is_leader(self) -> bool:
        return self.scrape().sum("syncagent_leader") == 1

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._stderr.close()


@contextlib.contextmanager
def running_agent(kubeconfig: Path | str, *args: str, **kw: Any) -> Iterator[Agent]:
    agent = Agent(kubeconfig, *args, **kw)
    try:
        yield agent
    finally:
        agent.stop()
        if os.environ.get("SYNCAGENT_KEEP_AGENT_LOGS") is None:
            agent.log.unlink(missing_ok=True)


def kubeconfig_via(kubeconfig: Path, server: str) -> Path:
    """A copy of ``kubeconfig`` whose clusters point at ``server``."""
    config = yaml.safe_load(kubeconfig.read_text())
    for cluster in config.get("clusters") or []:
        cluster["cluster"]["server"] = server
    out = Path(tempfile.mkstemp(prefix="kubeconfig-", suffix=".yaml")[1])
    out.write_text(yaml.safe_dump(config))
    return out


# -- a TCP proxy the test can cut ----------------------------------------------------------------


class FaultProxy:
    """Forwards loopback TCP connections to ``upstream``; :meth:`cut` drops every connection
    and refuses new ones (the API server is unreachable) until :meth:`restore`."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._up = threading.Event()
        self._up.set()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            if not self._up.is_set():
                _hard_close(conn)
                continue
            try:
                upstream = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _hard_close(conn)
                continue
            with self._lock:
                self._sockets |= {conn, upstream}
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            with self._lock:
                self._sockets -= {src, dst}

    def cut(self) -> None:
        self._up.clear()
        with self._lock:
            sockets = list(self._sockets)
            self._sockets.clear()
        for s in sockets:
            _hard_close(s)

    def restore(self) -> None:
        self._up.set()

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()


def _hard_close(s: socket.socket) -> None:
    # shutdown() wakes a pump thread blocked in recv(); close() alone would not, and the
    # connection would stay open. Linger 0 then makes close() send a reset.
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
