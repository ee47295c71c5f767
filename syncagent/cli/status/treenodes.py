"""``syncagent status``: a graph's live objects as a tree (pure: objects in, nodes out).

The tree follows controller references down from the graph (docs/status.md): the graph, the
program serving it (``status.routing``), then everything the graph controls (DCDs, a
DisaggregatedSet, a PodCliqueSet, Services) and what those control, down to pods. ReplicaSets
and StatefulSets are the workload controllers' own machinery: they are passed through, their
pods shown under the workload. Each node carries its ready state, the reason when it is not
ready (a condition, recent events), its controller and its field managers; a Service also names
the workloads whose pod templates its selector matches, which is what a cutover moves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from syncagent.cli.status import objectready
from syncagent.kube import kinds
from syncagent.kube.objects import Body

Obj = Mapping[str, Any]

PROGRAM = "Program"
# The workload controllers' intermediate objects: their children are shown under their owner.
PASS_THROUGH = frozenset({"ReplicaSet", "StatefulSet", "ControllerRevision"})
# Kinds whose pod templates a Service's selector can match.
WORKLOADS = frozenset(
    {"Deployment", "LeaderWorkerSet", "DisaggregatedSet", "PodCliqueSet", "PodClique"}
)
_ORDER = (
    kinds.DCD.kind,
    "DisaggregatedSet",
    "PodCliqueSet",
    "PodCliqueScalingGroup",
    "PodClique",
    "LeaderWorkerSet",
    "Deployment",
    "Service",
    "Pod",
)
MAX_EVENTS = 5


@dataclass(frozen=True, slots=True)
class Manager:
    manager: str
    operation: str
    subresource: str = ""


@dataclass(frozen=True, slots=True)
class EventLine:
    type: str
    reason: str
    message: str
    count: int
    last_seen: str


@dataclass
class Node:
    kind: str
    name: str
    ready: bool | None  # None: readiness does not apply (or is not reported yet)
    state: str
    reason: str = ""
    controller: str = ""  # Kind/name of the controller reference
    managers: list[Manager] = field(default_factory=list)
    events: list[EventLine] = field(default_factory=list)
    selects: list[str] = field(default_factory=list)  # Services: Kind/name of workloads
    children: list[Node] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"

    def walk(self) -> Iterable[Node]:
        yield self
        for child in self.children:
            yield from child.walk()


def build(
    graph: Obj,
    objects: Iterable[Obj],
    events: Iterable[Obj] = (),
    *,
    now: datetime,
    window: timedelta,
) -> Node:
    """The tree of ``graph``; ``objects`` may hold anything in its namespace (others ignored)."""
    objects = list(objects)
    children: dict[str, list[Obj]] = {}
    for obj in objects:
        controller = Body(obj).controller
        if controller is not None and controller.uid:
            children.setdefault(controller.uid, []).append(obj)
    recent = _recent_events(events, now=now, window=window)
    root = _node(graph, recent)
    program = _program_node(graph)
    program.children = _subtree(Body(graph).meta.uid, children, recent)
    root.children = [program]
    nodes = list(root.walk())
    templates = {n.ref: labels for n, labels in _workload_pods(nodes, [graph, *objects])}
    for node in nodes:
        if node.kind == "Service":
            _mark_selection(node, templates, _selector(node, objects))
    return root


def _subtree(
    uid: str,
    children: Mapping[str, list[Obj]],
    recent: _Events,
    above: frozenset[str] = frozenset(),
) -> list[Node]:
    """``above``: the uids on the path here; a controller reference back up one (which the API
    server does not refuse) ends the branch instead of recursing forever."""
    out: list[Node] = []
    above = above | {uid}
    for obj in children.get(uid, ()):
        child = Body(obj).meta.uid
        if child in above:
            continue
        if Body(obj).kind in PASS_THROUGH:
            out += _subtree(child, children, recent, above)
            continue
        node = _node(obj, recent)
        node.children = _subtree(child, children, recent, above)
        out.append(node)
    return sorted(out, key=_sort_key)


def _sort_key(node: Node) -> tuple[int, str, str]:
    rank = _ORDER.index(node.kind) if node.kind in _ORDER else len(_ORDER)
    return rank, node.kind, node.name


def _node(obj: Obj, recent: _Events) -> Node:
    body = Body(obj)
    ready, state, reason = objectready.of(obj)
    controller = body.controller
    node = Node(
        kind=body.kind,
        name=body.meta.name,
        ready=ready,
        state=state,
        reason=reason,
        controller=f"{controller.kind}/{controller.name}" if controller is not None else "",
        managers=[
            Manager(
                str(e.get("manager") or ""),
                str(e.get("operation") or ""),
                str(e.get("subresource") or ""),
            )
            for e in body.meta.managed_fields
        ],
    )
    lines = recent.get(body.meta.uid, [])
    # Warnings always; the rest only explain something not ready.
    node.events = [e for e in lines if e.type == "Warning" or ready is False][:MAX_EVENTS]
    return node


def _program_node(graph: Obj) -> Node:
    status = Body(graph).status
    pathway = str((status.get("routing") or {}).get("pathway") or "")
    cond = objectready.condition(graph, "WorkloadPathway")
    if not pathway:
        pathway = str(cond.get("reason") or "") if cond.get("status") == "True" else ""
    if not cond:
        return Node(PROGRAM, pathway or "(not routed)", None, "no routing reported yet")
    ok = cond.get("status") == "True"
    message = str(cond.get("message") or "")
    reason = "" if ok else f"{cond.get('reason')}: {message}".strip(": ")
    return Node(PROGRAM, pathway or "(not routed)", ok, message if ok else "", reason)


_Events = Mapping[str, list[EventLine]]


def _recent_events(events: Iterable[Obj], *, now: datetime, window: timedelta) -> _Events:
    """Per involved object uid, its events seen within ``window`` of ``now``, newest first."""
    out: dict[str, list[tuple[datetime, EventLine]]] = {}
    for ev in events:
        seen = _last_seen(ev)
        uid = str((ev.get("involvedObject") or {}).get("uid") or "")
        if seen is None or not uid or now - seen > window:
            continue
        line = EventLine(
            str(ev.get("type") or ""),
            str(ev.get("reason") or ""),
            " ".join(str(ev.get("message") or "").split()),
            int(ev.get("count") or (ev.get("series") or {}).get("count") or 1),
            seen.isoformat().replace("+00:00", "Z"),
        )
        out.setdefault(uid, []).append((seen, line))
    return {
        uid: [line for _, line in sorted(items, key=lambda i: i[0], reverse=True)]
        for uid, items in out.items()
    }


def _last_seen(ev: Obj) -> datetime | None:
    for raw in (
        (ev.get("series") or {}).get("lastObservedTime"),
        ev.get("lastTimestamp"),
        ev.get("eventTime"),
        ev.get("firstTimestamp"),
        (ev.get("metadata") or {}).get("creationTimestamp"),
    ):
        if raw:
            try:
                return datetime.fromisoformat(str(raw))
            except ValueError:
                continue
    return None


def _workload_pods(
    nodes: list[Node], objects: Iterable[Obj]
) -> Iterable[tuple[Node, list[Mapping[str, str]]]]:
    """Per workload node, the label sets a Service selector may match: its pod templates', and
    its pods' (controllers add labels to the pods they create: LeaderWorkerSet's own headless
    Services select those)."""
    by_ref = {f"{Body(o).kind}/{Body(o).meta.name}": o for o in objects}
    for node in nodes:
        if node.kind in WORKLOADS and node.ref in by_ref:
            labels = list(pod_template_labels(Body(by_ref[node.ref]).spec))
            labels += [
                Body(by_ref[n.ref]).meta.labels
                for n in node.walk()
                if n.kind == "Pod" and n.ref in by_ref
            ]
            yield node, labels


def pod_template_labels(spec: Mapping[str, Any], depth: int = 0) -> Iterable[Mapping[str, str]]:
    """The labels of every pod template in a workload's spec (``template``, ``leaderTemplate``,
    ``workerTemplate``, a DisaggregatedSet role's, a PodClique's ``podSpec`` owner...)."""
    if depth > 8:
        return
    for key, value in spec.items():
        if isinstance(value, Mapping):
            labels = (value.get("metadata") or {}).get("labels")
            if (key == "template" or key.endswith("Template")) and isinstance(labels, Mapping):
                yield labels
            yield from pod_template_labels(value, depth + 1)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Mapping):
                    yield from pod_template_labels(item, depth + 1)


def _selector(node: Node, objects: Iterable[Obj]) -> Mapping[str, str]:
    for obj in objects:
        body = Body(obj)
        if body.kind == "Service" and body.meta.name == node.name:
            return body.spec.get("selector") or {}
    return {}


def _mark_selection(
    node: Node, templates: Mapping[str, list[Mapping[str, str]]], selector: Mapping[str, str]
) -> None:
    if not selector:
        node.ready, node.state = None, "no selector"
        return
    node.selects = sorted(
        ref
        for ref, label_sets in templates.items()
        if any(all(labels.get(k) == v for k, v in selector.items()) for labels in label_sets)
    )
    if node.selects:
        node.ready, node.state = True, "selects " + ", ".join(node.selects)
    else:
        node.ready, node.state = False, "selects no workload of the graph"
        node.reason = "its selector matches no pod template of the graph's workloads"
