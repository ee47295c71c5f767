"""What the real controllers did, read by the e2e tests (no tests here): graph and pod readiness,
ready endpoints, and the EndpointSlice recorder.

:class:`EndpointRecorder` watches the namespace's EndpointSlices (list, then a watch stream on
its own connection) and, after every event, checks that each watched Service has at least one
ready endpoint. EndpointSlices are written by kube-controller-manager's EndpointSlice controller
from the pods kwok made Ready and the Service selectors the agent wrote, so a violation is a
moment in which the cluster itself had nothing ready behind a component's Service. A recorder
that stopped listening (an HTTP error, an ERROR event, an exception in its thread) records why
in :attr:`EndpointRecorder.failures`: it could not have seen a gap after that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

import httpx2
import orjson

from tests.support.kube import DGD, LWS, Kube, condition, controller
from tests.support.polling import eventually

# Real controllers take a few steps per change (scheduler, kwok, StatefulSet and LWS status);
# a rollout takes several. Deadlines are generous for a shared 2-core machine.
DEADLINE = 180.0
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
DS_NAME = "disaggregatedset.x-k8s.io/name"
DS_ROLE = "disaggregatedset.x-k8s.io/role"
DS_REVISION = "disaggregatedset.x-k8s.io/revision"


def graph_ready(kube: Kube, ns: str, name: str) -> bool:
    graph = kube.get(DGD, ns, name) or {}
    ready = condition(graph, "Ready")
    return (
        ready.get("status") == "True"
        and (graph.get("status") or {}).get("state") == "successful"
        and (graph.get("status") or {}).get("observedGeneration")
        == graph.get("metadata", {}).get("generation")
    )


def wait_ready(kube: Kube, ns: str, name: str, *, what: str, deadline: float = DEADLINE) -> None:
    def check() -> bool:
        return graph_ready(kube, ns, name)

    try:
        eventually(check, deadline=deadline, what=what)
    except AssertionError as err:
        ready = condition(kube.get(DGD, ns, name), "Ready")
        raise AssertionError(f"{err}; Ready condition: {ready}") from None


def pods(kube: Kube, ns: str, **labels: str) -> list[dict[str, Any]]:
    selector = ",".join(f"{k}={v}" for k, v in labels.items())
    params = {"labelSelector": selector} if selector else {}
    return kube.request("GET", kube.path("Pod", ns), **params)["items"]


def pod_ready(pod: dict[str, Any]) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def ds_children(kube: Kube, ns: str, ds: dict[str, Any]) -> list[dict[str, Any]]:
    """LeaderWorkerSets whose controller is the DS (by UID)."""
    uid = ds["metadata"]["uid"]
    return [c for c in kube.list(LWS, ns) if controller(c).get("uid") == uid]


def ready_endpoints(kube: Kube, ns: str, service: str) -> list[str]:
    slices = kube.request(
        "GET", kube.path("EndpointSlice", ns), labelSelector=f"{SERVICE_NAME_LABEL}={service}"
    )["items"]
    return sorted(_ready_addresses(slices))


def wait_ready_endpoints(kube: Kube, ns: str, service: str, count: int) -> list[str]:
    """The Service's ready endpoint addresses once there are exactly ``count``. The EndpointSlice
    controller follows pod readiness on its own, after the workload's status (and the graph's
    Ready) already counted the pod: reading the slices once races it."""

    def settled() -> list[str] | None:
        found = ready_endpoints(kube, ns, service)
        return found if len(found) == count else None

    return eventually(
        settled, deadline=DEADLINE, what=f"{count} ready endpoint(s) behind Service {service}"
    )


def _of(service: str, slices: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The EndpointSlices of ``service``."""
    return [
        s for s in slices if (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == service
    ]


def _ready_addresses(slices: list[dict[str, Any]]) -> set[str]:
    found = set()
    for s in slices:
        for endpoint in s.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready"):
                found.update(endpoint.get("addresses") or [])
    return found


class EndpointRecorder:
    """Records, from the server's EndpointSlices, every moment a watched Service had no ready
    endpoint. ``services`` are Service names; recording starts once each has one."""

    def __init__(self, kube: Kube, ns: str, services: list[str]) -> None:
        self.kube, self.ns, self.services = kube, ns, services
        self.slices: dict[str, dict[str, Any]] = {}
        self.violations: list[str] = []
        # Why the recorder stopped listening before it was told to (then it proves nothing).
        self.failures: list[str] = []
        self.events = 0
        self.resumed = 0
        # the longest time (s) each Service went without a ready endpoint, for the message
        self.gaps: dict[str, float] = {}
        self._empty_since: dict[str, float] = {}
        self.seen: dict[str, set[str]] = {s: set() for s in services}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> EndpointRecorder:
        listed = eventually(
            self._serving_listing,
            deadline=DEADLINE,
            what=f"a ready endpoint behind each of {self.services} before recording",
        )
        for obj in listed["items"]:
            self.slices[obj["metadata"]["name"]] = obj
        with self._lock:
            self._check("initial state")
        self._thread = threading.Thread(
            target=self._watch, args=(listed["metadata"]["resourceVersion"],), daemon=True
        )
        self._thread.start()
        return self

    def _serving_listing(self) -> dict[str, Any] | None:
        """The namespace's EndpointSlices once every watched Service has a ready endpoint.
        A graph turns Ready from its workloads' status; the EndpointSlice controller follows
        the same pods on its own, a moment later, so a recording that started at Ready could
        charge that lag to the change under test."""
        listed = self.kube.request("GET", self.kube.path("EndpointSlice", self.ns))
        if all(_ready_addresses(_of(service, listed["items"])) for service in self.services):
            return listed
        return None

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            # The watch ends within its 5 s server timeout; no thread may outlive the test.
            self._thread.join(timeout=30)
            assert not self._thread.is_alive(), "the EndpointSlice watch did not stop"

    def proof_problems(self) -> list[str]:
        """Why this recording proves nothing: it stopped listening, or saw no change at all."""
        problems = [f"the EndpointSlice recorder stopped listening: {f}" for f in self.failures]
        if self.events == 0:
            problems.append("the EndpointSlice recorder saw no EndpointSlice change")
        return problems

    def assert_served_throughout(self) -> None:
        assert not self.proof_problems(), self.proof_problems()
        assert self.violations == [], (
            f"{len(self.violations)} moments without a ready endpoint; longest gap per Service "
            f"{ {s: round(g, 1) for s, g in self.gaps.items()} }; first: {self.violations[:3]}"
        )

    def _watch(self, rv: str) -> None:
        own = self.kube.separate()
        try:
            while not self._stop.is_set():
                rv = self._stream(own, rv)
        except Exception as err:  # recorded: a silent death would read as "no gap"
            with self._lock:
                self.failures.append(f"{type(err).__name__}: {err}")
        finally:
            own.http.close()

    def _stream(self, kube: Kube, rv: str) -> str:
        params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}
        try:
            with kube.http.stream(
                "GET", kube.path("EndpointSlice", self.ns), params=params
            ) as response:
                if response.status_code != 200:
                    response.read()
                    raise RuntimeError(
                        f"watch answered HTTP {response.status_code}: {response.text}"
                    )
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return rv
                    if line:
                        rv = self._on_event(orjson.loads(line), rv)
        except httpx2.TransportError:
            # A dropped stream resumes from the last resourceVersion seen: no event is lost.
            self.resumed += 1
            self._stop.wait(0.2)
        return rv

    def _on_event(self, event: dict[str, Any], rv: str) -> str:
        obj = event["object"]
        if event["type"] == "ERROR":
            raise RuntimeError(f"watch ERROR event: {obj}")
        name = obj["metadata"]["name"]
        with self._lock:
            if event["type"] == "DELETED":
                self.slices.pop(name, None)
            else:
                self.slices[name] = obj
            self.events += 1
            self._check(f"{event['type']} EndpointSlice {name}")
        return str(obj["metadata"]["resourceVersion"])

    def _check(self, cause: str) -> None:
        for service in self.services:
            ready = _ready_addresses(_of(service, self.slices.values()))
            self.seen[service] |= ready
            now = time.monotonic()
            if not ready:
                self._empty_since.setdefault(service, now)
                self.violations.append(f"{cause}: Service {service} has no ready endpoint")
            elif service in self._empty_since:
                gap = now - self._empty_since.pop(service)
                self.gaps[service] = max(self.gaps.get(service, 0.0), gap)
