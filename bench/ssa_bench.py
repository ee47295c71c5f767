"""Benchmark: 500 Deployments converged three ways on a test control plane.

    python bench/ssa_bench.py [--count 500] [--concurrency 16] [--kubeconfig PATH]

Ways: GET then full PUT (POST when absent); a plain forced SSA apply every time; the engine
(dry run, write only on difference, cache of (digest, resourceVersion)). For each: the first
convergence (objects absent) and a converged re-sync of all of them. The engine's re-sync is
shown warm (the agent's case: a watch cache hands it live views, the convergence cache hits)
and cold (a new process: no cache, so one dry run per object). Prints requests by verb, wall
time and ratios. Without --kubeconfig a control plane is started (syncagent.devcluster).
"""

from __future__ import annotations

import argparse
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
from lightkube import KubeConfig

from syncagent.runtime.client import http_for
from syncagent.ssa import ApplyOptions, Engine, RequestCounter

MANAGER = "syncagent/bench"


@dataclass
class Row:
    way: str
    phase: str
    seconds: float
    requests: RequestCounter


def deployment(namespace: str, i: int) -> dict[str, Any]:
    name = f"web-{i:04d}"
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.example/app:1",
                            "ports": [{"containerPort": 8000}],
                        }
                    ]
                },
            },
        },
    }


def path(namespace: str, name: str = "") -> str:
    base = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    return f"{base}/{name}" if name else base


async def get_put(engine: Engine, desired: dict[str, Any]) -> None:
    http, meta = engine.api.http, desired["metadata"]
    got = await http.get(path(meta["namespace"], meta["name"]))
    if got.status_code == 404:
        r = await http.post(path(meta["namespace"]), content=orjson.dumps(desired))
    else:
        live = got.json()
        body = {**live, "spec": desired["spec"]}
        body["metadata"] = {**live["metadata"], "labels": meta["labels"]}
        r = await http.put(path(meta["namespace"], meta["name"]), content=orjson.dumps(body))
    r.raise_for_status()


async def plain_ssa(engine: Engine, desired: dict[str, Any]) -> None:
    meta = desired["metadata"]
    r = await engine.api.http.patch(
        path(meta["namespace"], meta["name"]),
        params={"fieldManager": MANAGER, "force": "true"},
        content=orjson.dumps(desired),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    r.raise_for_status()


async def each(
    fn: Callable[[Engine, dict[str, Any]], Awaitable[None]],
    engine: Engine,
    objs: list[dict[str, Any]],
    concurrency: int,
) -> None:
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(obj: dict[str, Any]) -> None:
        async with limiter:
            await fn(engine, obj)

    async with anyio.create_task_group() as group:
        for obj in objs:
            group.start_soon(one, obj)


@contextlib.contextmanager
def measured(rows: list[Row], counter: RequestCounter, way: str, phase: str) -> Iterator[None]:
    snapshot, started = counter.snapshot(), time.perf_counter()
    yield
    rows.append(Row(way, phase, time.perf_counter() - started, counter.since(snapshot)))


async def live_views(engine: Engine, namespace: str) -> dict[str, dict[str, Any]]:
    """What the agent's watch cache holds: one LIST (counted, shown separately)."""
    r = await engine.api.http.get(path(namespace))
    r.raise_for_status()
    return {f"Deployment/{namespace}/{o['metadata']['name']}": o for o in r.json()["items"]}


async def run(kubeconfig: Path, count: int, concurrency: int) -> list[Row]:
    config = KubeConfig.from_file(str(kubeconfig)).get()
    client = http_for(config, timeout=httpx2.Timeout(10.0))
    counter = RequestCounter()
    engine = Engine(client, counter=counter)
    rows: list[Row] = []
    suffix = uuid.uuid4().hex[:6]
    spaces = {way: f"bench-{way}-{suffix}" for way in ("getput", "ssa", "engine", "unordered")}
    for ns in spaces.values():
        ns_obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        await engine.apply(ns_obj, ApplyOptions(manager=MANAGER))

    for way, fn in (("GET+PUT", get_put), ("plain SSA", plain_ssa)):
        key = "getput" if fn is get_put else "ssa"
        objs = [deployment(spaces[key], i) for i in range(count)]
        for phase in ("first convergence", "converged re-sync"):
            with measured(rows, counter, way, phase):
                await each(fn, engine, objs, concurrency)

    objs = [deployment(spaces["engine"], i) for i in range(count)]
    with measured(rows, counter, "engine", "first convergence"):
        await engine.apply_all(
            objs, ApplyOptions(manager=MANAGER, force=True), concurrency=concurrency
        )
    with measured(rows, counter, "engine", "(watch cache LIST)"):
        views = await live_views(engine, spaces["engine"])
    with measured(rows, counter, "engine", "converged re-sync, warm"):
        entries = await engine.apply_all(
            objs, ApplyOptions(manager=MANAGER, force=True), live=views, concurrency=concurrency
        )
    assert {e.action for e in entries} == {"unchanged"}
    cold = Engine(client, counter=counter)
    with measured(rows, counter, "engine", "converged re-sync, cold"):
        entries = await cold.apply_all(
            objs, ApplyOptions(manager=MANAGER, force=True), live=views, concurrency=concurrency
        )
    assert {e.action for e in entries} == {"unchanged"}
    # The same engine, one apply() per object run concurrently: no stable write order, which
    # shows what apply_all's in-order writes cost on the first convergence.
    objs = [deployment(spaces["unordered"], i) for i in range(count)]

    async def engine_apply(engine: Engine, obj: dict[str, Any]) -> None:
        await engine.apply(obj, ApplyOptions(manager=MANAGER, force=True))

    with measured(rows, counter, "engine*", "first convergence"):
        await each(engine_apply, engine, objs, concurrency)
    await client.aclose()
    return rows


def report(rows: list[Row], count: int, concurrency: int) -> None:
    print(f"\n{count} Deployments, concurrency {concurrency}\n")
    print(f"{'way':<10} {'phase':<26} {'wall s':>8} {'requests':>9} {'writes':>7}  by verb")
    for row in rows:
        verbs = ", ".join(f"{k}={v}" for k, v in row.requests.by_verb().items()) or "-"
        print(
            f"{row.way:<10} {row.phase:<26} {row.seconds:>8.2f} {row.requests.total:>9} "
            f"{row.requests.writes:>7}  {verbs}"
        )
    print("engine* = one apply() per object, concurrent (apply_all writes in input order)")
    by = {(r.way, r.phase): r for r in rows}
    print("\nratios (engine / baseline; requests and wall time)")
    for phase, engine_phase, way_ in (
        ("first convergence", "first convergence", "engine"),
        ("first convergence", "first convergence", "engine*"),
        ("converged re-sync", "converged re-sync, warm", "engine"),
        ("converged re-sync", "converged re-sync, cold", "engine"),
    ):
        ours = by[(way_, engine_phase)]
        for way in ("GET+PUT", "plain SSA"):
            base = by[(way, phase)]
            print(
                f"  {way_:<7} {engine_phase:<26} vs {way:<9}: requests {_ratio(ours, base, 'total')}, "
                f"writes {_ratio(ours, base, 'writes')}, wall {ours.seconds / base.seconds:.2f}x"
            )


def _ratio(ours: Row, base: Row, attr: str) -> str:
    a, b = getattr(ours.requests, attr), getattr(base.requests, attr)
    return f"{a}/{b} = {a / b:.2f}x" if b else f"{a}/{b}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--kubeconfig", type=Path, help="use this cluster instead of starting one")
    args = parser.parse_args()
    if args.kubeconfig:
        rows = anyio.run(run, args.kubeconfig, args.count, args.concurrency)
    else:
        from syncagent.devcluster import ControlPlane

        with ControlPlane() as plane:
            print(f"control plane: {plane.describe()}")
            rows = anyio.run(run, plane.kubeconfig, args.count, args.concurrency)
    report(rows, args.count, args.concurrency)


if __name__ == "__main__":
    main()
