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
    Violations are kept with the state that caused them.

    A watch that breaks (an ``ERROR`` event, an HTTP error, a lost connection, an exception in
    the check itself) ends the recording and fails the ``with`` block: a recorder that stopped
    listening would pass vacuously. So does a block in which it saw no event at all."""

    def __init__(self, kube: Kube, ns: str, graph: str, components: list[str]) -> None:
        self.kube, self.ns, self.graph, self.components = kube, ns, graph, components
        self.objects: dict[str, dict[str, dict[str, Any]]] = {LWS: {}, "Service": {}}
        self.violations: list[str] = []
        self.events = 0
        self.failures: list[str] = []
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

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self._stop.set()
        # Watches end within their 5 s server timeout; no thread may outlive the test.
        for thread in self._threads:
            thread.join(timeout=30)
        assert not any(t.is_alive() for t in self._threads), "a recorder watch did not stop"
        if exc_type is not None:
            return
        assert not self.failures, f"the serving recorder stopped listening: {self.failures}"
        assert self.events > 0, "the serving recorder saw no event: it proved nothing"

    def _watch(self, kind: str, rv: str) -> None:
        own = self.kube.separate()
        try:
            self._stream(own, kind, rv)
        except Exception as err:  # recorded; the with block fails on it
            if not self._stop.is_set():
                self.failures.append(f"watch of {kind} failed: {type(err).__name__}: {err}")
        finally:
            own.http.close()

    def _stream(self, kube: Kube, kind: str, rv: str) -> None:
        path = kube.path(kind, self.ns)
        while not self._stop.is_set():
            params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}
            with kube.http.stream("GET", path, params=params) as response:
                if response.status_code != 200:
                    response.read()
                    raise RuntimeError(f"HTTP {response.status_code}: {response.text}")
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line:
                        rv = self._event(kind, orjson.loads(line))

    def _event(self, kind: str, event: dict[str, Any]) -> str:
        obj = event["object"]
        if event["type"] == "ERROR":
            raise RuntimeError(f"ERROR event: {obj}")
        with self._lock:
            if event["type"] == "DELETED":
                self.objects[kind].pop(obj["metadata"]["name"], None)
            else:
                self.objects[kind][obj["metadata"]["name"]] = obj
            self.events += 1
            self._check(f"{event['type']} {kind} {obj['metadata']['name']}")
        return str(obj["metadata"]["resourceVersion"])

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
