"""The floor bench's eyes and kubelet, on watches: a Deployment gets its ready status as soon as
the API server sends it, and the last graph's Ready is timed to the moment its status arrives.

Polling lists (every Deployment and graph, each second) loaded the API server in the agent phase
only, and rounded wall times to the interval. Nothing here asserts; it measures.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import floor_support as fs
import httpx2
import orjson

from tests.support.kube import DGD, Kube

READY = "all_resources_are_ready"


class Watch:
    """Lists ``kind`` in ``namespace``, then watches it from there, handing every object to
    ``seen`` (on this thread); lists again when a watch ends."""

    def __init__(self, kube: Kube, kind: str, namespace: str, seen: Callable[[dict], None]):
        self._kube = kube.separate()
        self._path = kube.path(kind, namespace)
        self._seen = seen
        self.stopped = False
        threading.Thread(target=self._run, daemon=True, name=f"watch {kind}").start()

    def _run(self) -> None:
        while not self.stopped:
            try:
                page = self._kube.request("GET", self._path)
                for obj in page["items"]:
                    self._seen(obj)
                self._follow(page["metadata"]["resourceVersion"])
            except (httpx2.HTTPError, OSError):
                if self.stopped:
                    return
                time.sleep(0.5)  # the API server is busy or restarting: list again

    def _follow(self, resource_version: str) -> None:
        params = {"watch": "true", "resourceVersion": resource_version, "timeoutSeconds": "600"}
        http = self._kube.http
        with http.stream("GET", self._path, params=params, timeout=None) as response:
            for line in response.iter_lines():
                if self.stopped:
                    return
                if line.strip():
                    event = orjson.loads(line)
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._seen(event["object"])


class Kubelet:
    """Writes a ready status on every Deployment of ``namespace`` whose status is behind, as soon
    as the watch shows it (the fake kubelet of tests/support/fake_workloads.py)."""

    def __init__(self, kube: Kube, namespace: str, pool: ThreadPoolExecutor) -> None:
        self._kube, self._namespace, self._pool = kube, namespace, pool
        self._written: set[tuple[str, int]] = set()
        self._watch = Watch(kube, "Deployment", namespace, self._seen)

    def _seen(self, obj: dict[str, Any]) -> None:
        status = fs.ready_status_due(obj)
        key = (obj["metadata"]["name"], obj["metadata"]["generation"])
        if status is not None and key not in self._written:
            self._written.add(key)
            self._pool.submit(fs.write_status, self._kube, self._namespace, key[0], status)

    def stop(self) -> None:
        self._watch.stopped = True


class ReadyGraphs:
    """When each graph of ``namespace`` was first seen Ready (monotonic time)."""

    def __init__(self, kube: Kube, namespace: str, count: int) -> None:
        self.count = count
        self.ready: dict[str, float] = {}
        self.all = threading.Event()
        self._watch = Watch(kube, DGD, namespace, self._seen)

    def _seen(self, obj: dict[str, Any]) -> None:
        conditions = (obj.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Ready" and c.get("reason") == READY for c in conditions):
            self.ready.setdefault(obj["metadata"]["name"], time.monotonic())
            if len(self.ready) >= self.count:
                self.all.set()

    def wait(self, *, deadline: float) -> float:
        """The time the last graph became Ready; raises TimeoutError after ``deadline`` s."""
        if not self.all.wait(deadline):
            raise TimeoutError(f"{len(self.ready)} of {self.count} graphs Ready")
        return max(self.ready.values())

    def stop(self) -> None:
        self._watch.stopped = True
