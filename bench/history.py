"""Figures for the ownership history: what the agent's bounded log holds at 1,000 graphs.

    python3 bench/history.py [--graphs 1000] [--rounds 6] [--budget-mib 16]

Offline, no control plane: every object the programs render for N graphs of 4 components
(frontend, decode, prefill, worker; ``render_graph``), plus the graphs, each given the
managedFields it has once applied (one Apply entry of its manager owning every rendered field).
Then ``--rounds`` rounds, each one new version per object fed through the agent's own cache
handler (``controller/history.py``) as a watch would deliver it, in turn:

- a takeover: the upstream operator's Update entry held every field, ours takes them all (the
  largest transition there is: every path twice);
- another writer takes one field (``kubectl scale`` on a Deployment, ``kubectl label``
  elsewhere), then ours takes it back (the flip, with its values).

Prints what the log holds (objects, transitions, dropped), the bytes it accounts against its
budget, the bytes it really holds (``sys.getsizeof`` over its structures; with ``--trace`` also
tracemalloc's count of what was allocated in ``historylog.py`` and is still held, too slow for
N=1000), the entries' sizes and the handler's cost per new version. Asserts nothing.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import floor_support as fs  # noqa: E402

from syncagent.api import DynamoGraphDeployment  # noqa: E402
from syncagent.controller.history import HistoryRecorder  # noqa: E402
from syncagent.kube import kinds  # noqa: E402
from syncagent.render import Environment, render_graph  # noqa: E402
from syncagent.rest.resource import Resource  # noqa: E402
from syncagent.runtime.cache import Change, ChangeType  # noqa: E402
from syncagent.ssa.historylog import HistoryLog  # noqa: E402

UPSTREAM = "manager"  # the upstream operator's field manager


def fields_v1(node: Any) -> dict[str, Any]:
    """The fieldsV1 set owning every leaf of ``node`` (lists of named maps by key, others whole)."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if isinstance(value, dict) and value:
            out[f"f:{key}"] = fields_v1(value)
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(i, dict) and "name" in i for i in value)
        ):
            items = {f'k:{{"name":"{i["name"]}"}}': {".": {}, **fields_v1(i)} for i in value}
            out[f"f:{key}"] = items
        else:
            out[f"f:{key}"] = {}
    return out


def applied(body: dict[str, Any], manager: str, uid: int, *, op: str = "Apply") -> dict[str, Any]:
    obj = copy.deepcopy(body)
    meta = obj.setdefault("metadata", {})
    meta.update(uid=f"uid-{uid}", resourceVersion="1")
    content = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "status")}
    entry = {"manager": manager, "operation": op, "apiVersion": obj["apiVersion"]}
    meta["managedFields"] = [{**entry, "fieldsV1": fields_v1(content)}]
    return obj


def world(count: int) -> list[tuple[Resource, dict[str, Any]]]:
    graphs = fs.graphs("bench", count)
    by_kind = {k.kind: k for k in vars(kinds).values() if isinstance(k, Resource)}
    out = [(kinds.DGD, applied(g, "kubectl", i)) for i, g in enumerate(graphs)]
    for g in graphs:
        typed = DynamoGraphDeployment.model_validate(
            {**g, "metadata": {**g["metadata"], "uid": "u"}}
        )
        for r in render_graph(typed, env=Environment(), lws=False):
            out.append((by_kind[r.kind], applied(r.body, r.manager, len(out))))
    return out


def next_version(obj: dict[str, Any], round_: int) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    meta = new["metadata"]
    meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
    ours = meta["managedFields"][0]
    if round_ % 3 == 0:  # a takeover: upstream held everything, ours takes it all
        obj["metadata"]["managedFields"] = [{**ours, "manager": UPSTREAM, "operation": "Update"}]
    elif round_ % 3 == 1:  # another writer takes one field
        if obj["kind"] == "Deployment":
            new["spec"]["replicas"] = 7
            taken = {"f:spec": {"f:replicas": {}}}
            ours["fieldsV1"]["f:spec"].pop("f:replicas", None)
            meta["managedFields"].append(
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "subresource": "scale",
                    "fieldsV1": taken,
                }
            )
        else:
            meta.setdefault("labels", {})["team"] = "a"
            taken = {"f:metadata": {"f:labels": {"f:team": {}}}}
            meta["managedFields"].append(
                {"manager": "kubectl-label", "operation": "Update", "fieldsV1": taken}
            )
    else:  # ours takes it back
        meta["managedFields"] = meta["managedFields"][:1]
        if obj["kind"] == "Deployment":
            new["spec"]["replicas"] = 1
            ours["fieldsV1"]["f:spec"]["f:replicas"] = {}
    return new


def held(log: HistoryLog) -> int:
    """Bytes the log holds: its dict and queue, and per object its key (strings included),
    record, list and every entry (sys.getsizeof, which counts each object's header)."""
    total = sys.getsizeof(log._records) + sys.getsizeof(log._order)
    for key, rec in log._records.items():
        total += sys.getsizeof(key) + sum(sys.getsizeof(part) for part in key)
        total += sys.getsizeof(rec) + sys.getsizeof(rec.uid) + sys.getsizeof(rec.last_version)
        total += sys.getsizeof(rec.entries) + sum(sys.getsizeof(e) for e in rec.entries)
    return total


def feed(objects: list[tuple[Resource, dict[str, Any]]], log: HistoryLog, rounds: int) -> None:
    recorder = HistoryRecorder(log)
    handlers = {kind.kind: recorder.handler(kind) for kind, _ in objects}
    changes, spent = 0, 0.0
    for round_ in range(rounds):
        for i, (kind, obj) in enumerate(objects):
            new = next_version(obj, round_)
            change = Change(ChangeType.MODIFIED, "bench", obj["metadata"]["name"], obj, new)
            began = time.perf_counter()
            handlers[kind.kind](change)
            spent += time.perf_counter() - began
            changes += 1
            objects[i] = (kind, new)
        print(
            f"round {round_ + 1}: {log.objects()} objects, {len(log)} transitions kept, "
            f"{log.dropped} dropped, {log.used / 2**20:.1f} MiB accounted",
            flush=True,
        )
    print(f"handler: {changes} new versions, {spent / changes * 1e6:.0f} us each")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--budget-mib", type=float, default=16.0)
    parser.add_argument(
        "--trace", action="store_true", help="also count with tracemalloc (slow: small N only)"
    )
    args = parser.parse_args()
    objects = world(args.graphs)
    print(f"objects: {len(objects)} ({args.graphs} graphs x 4 components, rendered)", flush=True)
    if args.trace:
        tracemalloc.start()
    log = HistoryLog(start=time.time(), budget=int(args.budget_mib * 1024 * 1024))
    feed(objects, log, args.rounds)
    size = held(log)
    print(
        f"budget: {log.budget / 2**20:.1f} MiB; accounted: {log.used / 2**20:.2f} MiB; "
        f"held (getsizeof): {size / 2**20:.2f} MiB = {size / 1e6:.1f} MB"
    )
    if args.trace:
        kept = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, "*ssa/historylog.py")]
        )
        traced = sum(s.size for s in kept.statistics("filename"))
        print(f"held (tracemalloc, allocated in historylog.py): {traced / 2**20:.2f} MiB")
    sizes = sorted(len(e) for rec in log._records.values() for e in rec.entries)
    if sizes:
        print(f"entry bytes: median {sizes[len(sizes) // 2]}, largest {sizes[-1]}")
    print(f"history complete since {log.complete_since - log.start:.3f} s after its start")
    return 0


if __name__ == "__main__":
    sys.exit(main())
