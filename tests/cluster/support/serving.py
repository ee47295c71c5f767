"""A watch that proves a component was never left without a ready workload behind its Service
(no tests here).

:class:`ServingRecorder` watches the graph's LeaderWorkerSets and Services (list + watch
streams) and checks, after every event, that every watched component has a Service selecting a
ready workload.
"""

from __future__ import annotations

import threading
from typing import Any

import orjson

from tests.support.kube import LWS, Kube


class ServingRecorder:
    """Watches LeaderWorkerSets and Services of a namespace (list + watch streams) and checks
    after every event that each component in ``components`` has its Service ``<dgd>-<c>``
    selecting at least one ready LeaderWorkerSet (leader template labels match the selector).
    Violations are kept with the state that caused them."""

    def __init__(self, kube: Kube, ns: str, graph: str, components: list[str]) -> None:
        self.kube, self.ns, self.graph, self.components = kube, ns, graph, components
        self.objects: dict[str, dict[str, dict[str, Any]]] = {LWS: {}, "Service": {}}
        self.violations: list[str] = []
        self.events = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> ServingRecorder:
        for kind in (LWS, "Service"):
            listed = self.kube.request("GET", self.kube.path(kind, self.ns))
            for obj in listed["items"]:
                self.objects[kind][obj["metadata"]["name"]] = obj
            rv = listed["metadata"]["resourceVersion"]
            thread = threading.Thread(target=self._watch, args=(kind, rv), daemon=True)
            thread.start()
            self._threads.append(thread)
        with self._lock:
            self._check("initial state")
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        # Watches end within their 5 s server timeout; no thread may outlive the test.
        for thread in self._threads:
            thread.join(timeout=30)
        assert not any(t.is_alive() for t in self._threads), "a recorder watch did not stop"

    def _watch(self, kind: str, rv: str) -> None:
        own = self.kube.separate()
        try:
            self._stream(own, kind, rv)
        finally:
            own.http.close()

    def _stream(self, kube: Kube, kind: str, rv: str) -> None:
        path = kube.path(kind, self.ns)
        while not self._stop.is_set():
            try:
                with kube.http.stream(
                    "GET", path, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}
                ) as response:
                    for line in response.iter_lines():
                        if self._stop.is_set():
                            return
                        if not line:
                            continue
                        event = orjson.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":
                            return
                        rv = obj["metadata"]["resourceVersion"]
                        with self._lock:
                            if event["type"] == "DELETED":
                                self.objects[kind].pop(obj["metadata"]["name"], None)
                            else:
                                self.objects[kind][obj["metadata"]["name"]] = obj
                            self.events += 1
                            self._check(f"{event['type']} {kind} {obj['metadata']['name']}")
            except Exception:
                if self._stop.is_set():
                    return

    def _check(self, cause: str) -> None:
        for c in self.components:
            svc = self.objects["Service"].get(f"{self.graph}-{c.lower()}")
            if svc is None:
                self.violations.append(f"{cause}: Service of {c} missing")
                continue
            selector = svc["spec"].get("selector") or {}
            if not any(_serves(lws, selector) for lws in self.objects[LWS].values()):
                self.violations.append(
                    f"{cause}: no ready workload selected by {c}'s Service {selector}"
                )


def _serves(lws: dict[str, Any], selector: dict[str, str]) -> bool:
    if lws["metadata"].get("deletionTimestamp"):
        return False
    status = lws.get("status") or {}
    if int(status.get("readyReplicas") or 0) < 1:
        return False
    template = (
        lws["spec"]["leaderWorkerTemplate"].get("leaderTemplate")
        or lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    )
    labels = (template.get("metadata") or {}).get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())
