"""Takeover from the real upstream operator, and hand-back to it, with no pod replaced.

For each graph: upstream's operator (built from the snapshot, its own CRDs) serves it until
every pod is Ready; its process stops; syncagent starts and takes the graph over; syncagent
stops; the operator starts again and takes it back. Throughout, an EndpointSlice recorder
watches every Service of the graph that selects pods and must see no moment without a ready
endpoint. After each move:

- no member of the graph's family (everything it owns, followed by owner reference) is gone,
  new, or has another uid, controller reference or revision: no pod, ReplicaSet or StatefulSet
  revision replaced (tests/e2e/support/takeover.py);
- after the takeover, the operator's Update entries (manager ``manager``, its binary's name)
  own nothing of the objects' content or status any more: syncagent's managers do
  (docs/ownership.md §1), and a resync writes nothing;
- after the hand-back, what the operator changed besides pod templates is printed (it is the
  list in docs/ownership.md §5).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syncagent.devcluster.simcluster import SimulatedCluster
from tests.e2e.support.observe import DEADLINE, EndpointRecorder, pod_ready
from tests.e2e.support.takeover import (
    Member,
    family,
    family_objects,
    left_with,
    metadata_changes,
    replaced,
    volcano_group_served,
)
from tests.e2e.support.upstream_operator import UpstreamOperator, running_operator
from tests.support.agent import WRITE_VERBS, Agent, reconciled, running_agent
from tests.support.graphs import ENABLE_GROVE, component, graph
from tests.support.kube import DCD, DGD, Kube, condition
from tests.support.polling import eventually
from tests.support.upstream_source import BuildReport

OPERATOR = "manager"  # the field manager of upstream's Update requests (its binary's name)
MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
RESYNC = "5s"
WORKLOADS = ("Deployment", "StatefulSet", "LeaderWorkerSet")


def _graphs(ns: str) -> dict[str, dict[str, Any]]:
    front = component("Frontend", "frontend")
    off = {ENABLE_GROVE: "false"}
    return {
        "aggregated": graph(ns, "agg", [front, component("worker", "worker")], **off),
        "disaggregated": graph(
            ns,
            "disagg",
            [front, component("prefill", "prefill"), component("decode", "decode")],
            **off,
        ),
        "multinode": graph(ns, "mn", [front, component("worker", "worker", nodes=2)], **off),
        "shared-model-service": graph(
            ns,
            "model",
            [
                front,
                component("prefill", "prefill", **MODEL),
                component("decode", "decode", **MODEL),
            ],
            **off,
        ),
    }


@dataclass
class Cluster:
    control_plane: SimulatedCluster
    kube: Kube
    ns: str
    binary: Path
    lws: bool

    @contextlib.contextmanager
    def operator(self) -> Iterator[UpstreamOperator]:
        with running_operator(
            self.binary,
            self.control_plane.kubeconfig,
            self.ns,
            cert_dir=self.control_plane.pki.webhook_dir,
            lws=self.lws,
        ) as op:
            yield op


def _workloads_caught_up(objects: dict[str, dict[str, Any]]) -> bool:
    """Every workload's controller has seen its latest spec: a template change would have made
    its new ReplicaSet or revision by now."""
    for key, obj in objects.items():
        if key.split("/")[0] in WORKLOADS:
            status = obj.get("status") or {}
            if status.get("observedGeneration") != obj["metadata"].get("generation"):
                return False
    return True


def _serving(kube: Kube, ns: str, name: str) -> dict[str, dict[str, Any]] | None:
    """The family once the graph is Ready, every DCD Available, every workload caught up and
    every pod Ready (none coming or going)."""
    objects = family_objects(kube, ns, name)
    if not objects or condition(objects[f"{DGD}/{name}"], "Ready").get("status") != "True":
        return None
    kinds = [k.split("/")[0] for k in objects]
    pods = [o for k, o in objects.items() if k.startswith("Pod/")]
    if DCD not in kinds or not pods or not all(pod_ready(p) for p in pods):
        return None
    dcds = [o for k, o in objects.items() if k.startswith(f"{DCD}/")]
    if any(condition(d, "Available").get("status") != "True" for d in dcds):
        return None
    return objects if _workloads_caught_up(objects) else None


def _syncagent_holds(obj: dict[str, Any]) -> bool:
    return any(
        e.get("manager", "").startswith("syncagent/")
        for e in obj["metadata"].get("managedFields") or ()
    )


def _taken_over(kube: Kube, ns: str, name: str) -> dict[str, dict[str, Any]] | None:
    """Serving, with the graph's status and every DCD written by syncagent."""
    objects = _serving(kube, ns, name)
    if objects is None:
        return None
    mine = [o for k, o in objects.items() if k.split("/")[0] in (DGD, DCD)]
    return objects if all(_syncagent_holds(o) for o in mine) else None


def _handed_back(
    kube: Kube, ns: str, name: str, operator: UpstreamOperator
) -> dict[str, dict[str, Any]] | None:
    """Serving, after the operator (this run of it: its log is new) reconciled the graph and
    each of its DCDs to the end, its finalizer back on every DCD."""
    objects = _serving(kube, ns, name)
    if objects is None:
        return None
    log = operator.log_text().splitlines()
    dcds = [o for k, o in objects.items() if k.startswith(f"{DCD}/")]
    done = [("Reconciliation done", f'"{DGD}": {{"name":"{name}"')] + [
        ("Finished reconciling.", f'"{DCD}": {{"name":"{d["metadata"]["name"]}"') for d in dcds
    ]
    if not all(any(a in line and b in line for line in log) for a, b in done):
        return None
    if not all("nvidia.com/finalizer" in (d["metadata"].get("finalizers") or ()) for d in dcds):
        return None
    return objects


def _state(kube: Kube, ns: str, name: str) -> str:
    objects = family_objects(kube, ns, name)
    lines = []
    for key, obj in objects.items():
        meta = obj["metadata"]
        conds = {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or ()}
        stamps = [
            f"{e['manager']}/{e.get('subresource', '')}@{e['time']}"
            for e in meta.get("managedFields") or ()
        ]
        lines.append(f"{key} fin={meta.get('finalizers')} conds={conds} mf={stamps}")
    return "\n".join(lines)


Family = dict[str, dict[str, Any]]


def _each(
    kube: Kube, ns: str, names: list[str], check: Callable[[str], Family | None], what: str
) -> dict[str, Family]:
    """``check`` of every graph once all pass; on a timeout, the state of those that did not."""

    def all_pass() -> dict[str, Family] | None:
        found = {n: check(n) for n in names}
        return {n: f for n, f in found.items() if f is not None} if all(found.values()) else None

    try:
        return eventually(all_pass, deadline=DEADLINE, what=f"{what} {names}")
    except AssertionError as err:
        states = [_state(kube, ns, n) for n in names if check(n) is None]
        raise AssertionError(f"{err}\n" + "\n".join(states)) from None


def _services(objects: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(
        o["metadata"]["name"]
        for k, o in objects.items()
        if k.startswith("Service/") and (o.get("spec") or {}).get("selector")
    )


def _reconciles(agent: Agent, keys: set[str]) -> dict[str, int]:
    counts = dict.fromkeys(keys, 0)
    for line in reconciled(agent.logs()):
        key = f"{line['controller']}:{line['key']}"
        if key in counts:
            counts[key] += 1
    return counts


def _writes(agent: Agent) -> dict[str, float]:
    """Real writes so far, per ``resource verb`` (Leases and Events left out)."""
    out: dict[str, float] = {}
    for (name, labels), value in agent.scrape().samples.items():
        d = dict(labels)
        if name != "syncagent_api_requests_total" or d.get("dry_run") != "false":
            continue
        if d.get("verb") in WRITE_VERBS and d.get("resource") not in ("leases", "events"):
            key = f"{d.get('resource')} {d.get('verb')}"
            out[key] = out.get(key, 0.0) + value
    return out


def _resync_writes(agent: Agent, families: dict[str, Family], ns: str) -> dict[str, float]:
    """Writes the agent made during one resync of every graph and each of its DCDs."""
    keys = {
        f"{controller}:{ns}/{key.split('/', 1)[1]}"
        for objects in families.values()
        for key in objects
        for kind, controller in ((DGD, "dgd"), (DCD, "dcd"))
        if key.startswith(f"{kind}/")
    }
    before = _writes(agent)
    start = _reconciles(agent, keys)
    eventually(
        lambda: all(n > start[k] for k, n in _reconciles(agent, keys).items()),
        deadline=DEADLINE,
        what=f"a resync of every one of {sorted(keys)}",
    )
    after = _writes(agent)
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}


def _probe_recorder(kube: Kube, ns: str, recorder: EndpointRecorder, services: list[str]) -> None:
    """Prove the recorder still listens: a label on each Service reaches its EndpointSlices
    (the EndpointSlice controller copies Service labels), so each makes one event."""
    seen = recorder.events
    for name in services:
        kube.merge("Service", ns, name, {"metadata": {"labels": {"takeover-probe": "1"}}})
    eventually(
        lambda: recorder.events >= seen + len(services),
        deadline=DEADLINE,
        what="the recorder seeing the probe label on every Service's EndpointSlice",
    )


def _must_keep(before: dict[str, Member], after: dict[str, Member], move: str) -> None:
    lines = replaced(before, after)
    print(f"{move}: " + ("; ".join(lines) if lines else "every member kept"))
    assert not lines, f"{move} replaced or changed:\n  " + "\n  ".join(lines)


def test_takeover_and_hand_back_replace_no_pod(
    control_plane: SimulatedCluster,
    kube: Kube,
    namespace: str,
    operator_binary: BuildReport,
    upstream_crds: list[str],
) -> None:
    """The four graphs live side by side in one namespace, as an operator serves them."""
    bodies = _graphs(namespace)
    names = [b["metadata"]["name"] for b in bodies.values()]
    cluster = Cluster(control_plane, kube, namespace, operator_binary.binary, lws=True)
    with contextlib.ExitStack() as stack:
        stack.enter_context(volcano_group_served(kube))
        with cluster.operator():
            for body in bodies.values():
                kube.create(body)
            served = _each(
                kube, namespace, names, lambda n: _serving(kube, namespace, n), "upstream serving"
            )
        services = sorted(s for objects in served.values() for s in _services(objects))
        before = {n: family(family_objects(kube, namespace, n)) for n in names}
        recorder = stack.enter_context(EndpointRecorder(kube, namespace, services))
        with running_agent(
            control_plane.kubeconfig,
            "--log-level",
            "debug",
            f"--resync-period={RESYNC}",
            namespace=namespace,
        ) as agent:
            taken = _each(
                kube,
                namespace,
                names,
                lambda n: _taken_over(kube, namespace, n),
                "syncagent serving",
            )
            # The first resync may still finish the takeover; the second must write nothing.
            _resync_writes(agent, taken, namespace)
            resync = _resync_writes(agent, taken, namespace)
            errors = agent.scrape().sum("syncagent_reconcile_total", result="error")
        taken = {n: family_objects(kube, namespace, n) for n in names}
        for n in names:
            _must_keep(before[n], family(taken[n]), f"takeover of {n}")
            left = left_with(taken[n], OPERATOR)
            print(f"{n}: left with the operator after the takeover: {left or 'nothing'}")
            content = {
                k: v for k, v in left.items() if any(": spec" in f or "status" in f for f in v)
            }
            assert not content, content
        assert not resync, f"a second resync after the takeover wrote: {resync}"
        assert errors == 0

        with cluster.operator() as op:
            back = _each(
                kube,
                namespace,
                names,
                lambda n: _handed_back(kube, namespace, n, op),
                "upstream again",
            )
        for n in names:
            _must_keep(family(taken[n]), family(back[n]), f"hand-back of {n}")
            changed = metadata_changes(taken[n], back[n])
            print(f"{n}: the operator changed, besides pod templates:", *changed, sep="\n  ")
        _probe_recorder(kube, namespace, recorder, services)
    recorder.assert_served_throughout()
    kept = sum(len(b) for b in before.values())
    print(f"{kept} objects kept; {recorder.events} EndpointSlice events; Services {services}")
