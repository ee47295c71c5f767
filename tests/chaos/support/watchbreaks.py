"""R7: graphs changing while every watch connection is cut at random intervals and watches are
answered with 410 Expired (no tests here); then ``syncagent plan`` (server dry runs against the
live objects) must find nothing to change for any graph."""

from __future__ import annotations

import base64
import random
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import httpx2
import orjson
import yaml

from tests.support.apiproxy import ApiProxy


def compact_etcd(etcd_url: str) -> int:
    """Compact etcd's history up to now (what the API server does every 5 minutes); watches
    the API server must serve from etcd below that revision then get 410 Gone."""
    key = base64.b64encode(b"/registry").decode()
    with httpx2.Client(base_url=etcd_url, timeout=10) as http:
        resp = http.post("/v3/kv/range", json={"key": key, "limit": 1})
        resp.raise_for_status()
        revision = int(resp.json()["header"]["revision"])
        resp = http.post("/v3/kv/compaction", json={"revision": revision, "physical": True})
        resp.raise_for_status()
    return revision


class WatchCutter:
    """Cuts every open watch of ``proxy`` at random intervals (``low`` to ``high`` seconds),
    and compacts etcd every ``compact_every`` rounds."""

    def __init__(
        self,
        proxy: ApiProxy,
        *,
        low: float = 0.5,
        high: float = 4.0,
        seed: int = 7,
        compact_every: int = 3,
    ) -> None:
        self.proxy = proxy
        self.compact_every = compact_every
        self.compactions = 0
        self.low, self.high = low, high
        self.rng = random.Random(seed)
        self.cuts = 0  # connections cut
        self.rounds = 0
        self.failures: list[str] = []  # why the cutter stopped early (then it proved nothing)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WatchCutter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.rng.uniform(self.low, self.high)):
                self.cuts += self.proxy.cut_watches()
                self.rounds += 1
                if self.rounds % self.compact_every == 0:
                    compact_etcd(self.proxy.plane.etcd_url)
                    self.compactions += 1
        except Exception as err:  # recorded: a cutter that died silently cut nothing more
            self.failures.append(f"{type(err).__name__}: {err}")


@dataclass
class PlanResult:
    exit_code: int
    changed: list[str] = field(default_factory=list)  # "action subject"
    errors: list[str] = field(default_factory=list)


def manifest(graph: dict[str, Any]) -> dict[str, Any]:
    keep = ("name", "namespace", "labels", "annotations")
    meta = {k: graph["metadata"][k] for k in keep if k in graph["metadata"]}
    return {
        "apiVersion": graph["apiVersion"],
        "kind": graph["kind"],
        "metadata": meta,
        "spec": graph["spec"],
    }


def plan(kubeconfig: Any, graphs: list[dict[str, Any]]) -> PlanResult:
    """``syncagent plan -o json`` of the live graphs, as a user would run it."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "syncagent.cli.main",
            "plan",
            "-f",
            "-",
            "-o",
            "json",
            "--kubeconfig",
            str(kubeconfig),
            "--capability",
            "grove=false",
        ],
        input=yaml.safe_dump_all([manifest(g) for g in graphs]).encode(),
        capture_output=True,
        check=False,
    )
    if out.returncode == 1 or not out.stdout:
        return PlanResult(out.returncode, errors=[out.stderr.decode(errors="replace")[-2000:]])
    doc = orjson.loads(out.stdout)
    changed = [
        f"{o['action']} {o['subject']} {o.get('differences') or ''}"
        for o in doc["objects"]
        if o["action"] != "unchanged"
    ]
    return PlanResult(out.returncode, changed, list(doc.get("errors") or ()))
