"""Helpers of bench/floor.py: the API server's own request counts, the bare apply loop, graphs.

Nothing here asserts; it measures.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from syncagent.api import DynamoGraphDeployment
from syncagent.render import Environment, Rendered, render_graph
from tests.support.fake_workloads import _deployment_ready as deployment_ready
from tests.support.graphs import component, graph
from tests.support.kube import DCD, DGD, PATHS, Kube

MUTATING = ("APPLY", "PATCH", "POST", "PUT", "DELETE", "DELETECOLLECTION")
_SAMPLE = re.compile(r"^apiserver_request_total\{(.*)\} (\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
# The fake kubelet's readiness writes (no kubelet in this tier) and the API server's own
# bookkeeping (ClusterIP allocations, its endpoints and leases): nobody's apply.
IGNORED = (
    ("deployments", "status"),
    ("ipaddresses", ""),
    ("endpoints", ""),
    ("endpointslices", ""),
    ("leases", ""),
)


def server_requests(kube: Kube) -> Counter[tuple[str, str, str, str]]:
    """apiserver_request_total summed by (verb, resource, subresource, dry_run)."""
    text = kube.http.get("/metrics").text
    out: Counter[tuple[str, str, str, str]] = Counter()
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match:
            continue
        labels = dict(_LABEL.findall(match.group(1)))
        key = (
            labels.get("verb", ""),
            labels.get("resource", ""),
            labels.get("subresource", ""),
            labels.get("dry_run", ""),
        )
        out[key] += float(match.group(2))
    return out


def mutating(
    before: Counter[tuple[str, str, str, str]],
    after: Counter[tuple[str, str, str, str]],
    *,
    exclude: Iterable[tuple[str, str]] = IGNORED,
) -> Counter[str]:
    """Mutating requests between two scrapes, by resource[/subresource] (dry runs included)."""
    skip = set(exclude)
    out: Counter[str] = Counter()
    for key, value in (after - before).items():
        verb, resource, sub, _ = key
        if verb in MUTATING and (resource, sub) not in skip:
            out[f"{resource}/{sub}" if sub else resource] += int(value)
    return out


def dry_runs(before: Counter, after: Counter) -> int:
    return int(sum(v for k, v in (after - before).items() if k[0] in MUTATING and k[3]))


def graphs(namespace: str, count: int) -> list[dict[str, Any]]:
    comps = [
        component("frontend", "frontend"),
        component("decode", "decode"),
        component("prefill", "prefill"),
        component("worker", "worker"),
    ]
    return [graph(namespace, f"g{i:04d}", comps) for i in range(count)]


def create_namespace(kube: Kube, name: str) -> None:
    kube.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )


def _apply(kube: Kube, path: str, body: dict[str, Any], manager: str) -> dict[str, Any]:
    response = kube.http.patch(
        path,
        params={"fieldManager": manager, "force": "true"},
        content=orjson.dumps(body),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    response.raise_for_status()
    return response.json()


def _path(r: Rendered) -> str:
    base = PATHS[r.kind].format(ns=r.namespace)
    return f"{base}/{r.name}"


def _with_owner_uid(r: Rendered, uids: dict[tuple[str, str], str]) -> dict[str, Any]:
    body = r.create_manifest()
    for item in body["metadata"].get("ownerReferences") or ():
        item["uid"] = uids[(item["kind"], item["name"])]
    return body


STATUSES = (
    {"state": "pending", "conditions": []},
    {"state": "pending", "conditions": [_c := {"type": "Ready", "status": "False", "reason": "a"}]},
    {"state": "successful", "conditions": [{**_c, "status": "True", "reason": "b"}]},
)


def _condition(entry: dict[str, Any]) -> dict[str, Any]:
    return {**entry, "message": "floor", "lastTransitionTime": "2026-01-01T00:00:00Z"}


def _status_body(kind: str, namespace: str, name: str, step: int) -> dict[str, Any]:
    status = dict(STATUSES[step])
    status["conditions"] = [_condition(c) for c in status["conditions"]]
    if kind == DCD:
        status = {"conditions": status["conditions"]}
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "status": status,
    }


def bare_loop(kube: Kube, created: list[dict[str, Any]], *, concurrency: int) -> dict[str, int]:
    """One forced apply per rendered object (owners first, real owner UIDs), then three status
    writes per graph and per DCD, ``concurrency`` at a time. Returns what it wrote."""
    uids = {(DGD, g["metadata"]["name"]): g["metadata"]["uid"] for g in created}
    graphs = [DynamoGraphDeployment.model_validate(g) for g in created]
    rendered = [r for g in graphs for r in render_graph(g, env=Environment(), lws=False)]
    waves = [
        [r for r in rendered if r.owner is None or r.owner.kind == DGD],
        [r for r in rendered if r.owner is not None and r.owner.kind != DGD],
    ]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for wave in waves:
            results = pool.map(
                lambda r: (r, _apply(kube, _path(r), _with_owner_uid(r, uids), r.manager)), wave
            )
            for r, obj in results:
                uids[(r.kind, r.name)] = obj["metadata"]["uid"]
        owners = [(DGD, g["metadata"]["namespace"], g["metadata"]["name"]) for g in created]
        owners += [(DCD, r.namespace, r.name) for r in rendered if r.kind == DCD]
        for step in range(len(STATUSES)):
            list(
                pool.map(
                    lambda o, s=step: _apply(
                        kube,
                        f"{PATHS[o[0]].format(ns=o[1])}/{o[2]}/status",
                        _status_body(o[0], o[1], o[2], s),
                        "floor-status",
                    ),
                    owners,
                )
            )
    return {"objects": len(rendered), "status owners": len(owners)}


def ready_status_due(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The ready status the fake kubelet owes a Deployment whose status is behind (else None)."""
    meta, replicas = obj["metadata"], obj["spec"].get("replicas", 1)
    live = obj.get("status") or {}
    if live.get("observedGeneration") == meta["generation"] and live.get("replicas") == replicas:
        return None
    return deployment_ready(meta["generation"], replicas)


def write_status(kube: Kube, namespace: str, name: str, status: dict[str, Any]) -> None:
    """The fake kubelet's write of a Deployment's status."""
    kube.merge(
        "Deployment", namespace, name, {"status": status}, sub="status", manager="test-kubelet"
    )


def simulate_ready(kube: Kube, namespace: str, pool: ThreadPoolExecutor) -> int:
    """The fake kubelet of tests/support/fake_workloads.py, writing in parallel: a ready status
    on every Deployment whose status is behind. Returns how many it wrote."""
    behind = [
        (obj["metadata"]["name"], status)
        for obj in kube.list("Deployment", namespace)
        if (status := ready_status_due(obj)) is not None
    ]
    list(pool.map(lambda item: write_status(kube, namespace, *item), behind))
    return len(behind)


def percentile(buckets: list[tuple[float, float]], q: float) -> float:
    """The ``q`` quantile of a cumulative histogram [(le, count)], linear within a bucket."""
    total = buckets[-1][1] if buckets else 0
    if total == 0:
        return float("nan")
    rank, prev_le, prev_count = q * total, 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return prev_le
            width = count - prev_count
            return prev_le + (le - prev_le) * ((rank - prev_count) / width if width else 1.0)
        prev_le, prev_count = le, count
    return prev_le


def histogram(samples: dict, name: str) -> list[tuple[float, float]]:
    out = []
    for (n, labels), v in samples.items():
        if n == f"{name}_bucket":
            le = dict(labels)["le"]
            out.append((float("inf") if le == "+Inf" else float(le), v))
    return sorted(out)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(*pids: int) -> float:
    """CPU time (user + system) the processes used so far: on a shared machine a steadier
    figure than wall time, which other work stretches."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return total / os.sysconf("SC_CLK_TCK")


def timed(fn: Any, *args: Any, **kw: Any) -> tuple[Any, float]:
    start = time.monotonic()
    out = fn(*args, **kw)
    return out, time.monotonic() - start
