"""Ownership history, the pure parts: transitions between two managedFields snapshots, the
bounded log, the per-field timeline ``blame --history`` prints, and the agent's recorder
(tests/unit/controller/test_history_api.py: how it is served)."""

from __future__ import annotations

import copy
import zlib

import orjson
import pytest

from syncagent.controller.history import HistoryRecorder
from syncagent.inspect import history as view
from syncagent.kube import kinds
from syncagent.runtime.cache import Change, ChangeType
from syncagent.ssa.history import MAX_VALUE, Transition, from_doc, transition
from syncagent.ssa.historylog import ENTRY_OVERHEAD, OBJECT_OVERHEAD, HistoryLog
from tests.unit.support.managedfields import (
    OURS,
    REPLICAS,
    deployment,
    entry,
    ours,
    scaled_away,
)


def test_a_field_taken_by_another_writer_is_gained_and_lost_with_its_values() -> None:
    old, new = scaled_away()
    found = transition(old, new, time=10.0, tracked=ours)
    assert found is not None
    changes = {c.manager: c for c in found.changes}
    assert changes["kubectl-scale"].gained == (".spec.replicas",)
    assert (changes["kubectl-scale"].operation, changes["kubectl-scale"].subresource) == (
        "Update",
        "scale",
    )
    assert changes[OURS].lost == (".spec.replicas",)
    assert changes[OURS].gained == ()
    assert [(v.path, v.before, v.after) for v in found.values] == [(".spec.replicas", "2", "5")]
    assert found.resource_version == "2"
    assert from_doc(orjson.loads(orjson.dumps(found.to_doc()))) == found


def test_a_new_version_that_moves_no_field_is_no_transition() -> None:
    old = deployment(2, entry(OURS, REPLICAS), rv="1")
    new = copy.deepcopy(old)
    new["metadata"]["resourceVersion"] = "2"
    new["metadata"]["managedFields"][0]["time"] = "2026-01-01T00:05:00Z"
    new["spec"]["replicas"] = 3  # a value changed by the same owner moves no ownership
    assert transition(old, new, time=1.0, tracked=ours) is None


def test_values_are_kept_only_for_fields_our_managers_hold() -> None:
    labels = {"f:metadata": {"f:labels": {"f:team": {}}}}
    old = deployment(2, entry(OURS, REPLICAS))
    new = deployment(2, entry(OURS, REPLICAS), entry("kubectl-label", labels, op="Update"))
    found = transition(old, new, time=1.0, tracked=ours)
    assert found is not None
    assert [(c.manager, c.gained) for c in found.changes] == [
        ("kubectl-label", (".metadata.labels.team",))
    ]
    assert found.values == ()
    # A co-owner joining a field we hold (our entry unchanged): its value, when it moved.
    joined = deployment(2, entry(OURS, REPLICAS), entry("x", REPLICAS))
    found = transition(old, joined, time=1.0, tracked=ours)
    assert found is not None
    assert [(c.manager, c.gained) for c in found.changes] == [("x", (".spec.replicas",))]
    assert found.values == ()  # the same value: ownership moved, nothing else
    joined["spec"]["replicas"] = 4
    found = transition(old, joined, time=1.0, tracked=ours)
    assert found is not None
    assert [(v.path, v.before, v.after) for v in found.values] == [(".spec.replicas", "2", "4")]


def test_a_long_value_is_cut() -> None:
    old = deployment(2, entry(OURS, REPLICAS))
    old["spec"]["replicas"] = "x" * 1000
    new = deployment(2, entry("x", REPLICAS))
    new["spec"]["replicas"] = "y" * 1000
    found = transition(old, new, time=1.0, tracked=ours)
    assert found is not None
    assert len(found.values[0].before or "") == MAX_VALUE
    assert (found.values[0].after or "").endswith("...")


def flip(time: float, rv: str, *, to_kubectl: bool) -> Transition:
    old, new = scaled_away()
    if not to_kubectl:
        old, new = new, old
    new["metadata"]["resourceVersion"] = rv
    found = transition(old, new, time=time, tracked=ours)
    assert found is not None
    return found


KEY = ("apps", "Deployment", "ns", "web")


def test_the_log_drops_the_oldest_transitions_of_all_objects_first() -> None:
    one = len(zlib.compress(orjson.dumps(flip(1.0, "1", to_kubectl=True).to_doc())))
    one += ENTRY_OVERHEAD
    log = HistoryLog(start=0.0, budget=2 * OBJECT_OVERHEAD + 3 * one)
    log.record(KEY, "u1", flip(1.0, "1", to_kubectl=True))
    other = ("apps", "Deployment", "ns", "api")
    log.record(other, "u2", flip(2.0, "2", to_kubectl=True))
    log.record(KEY, "u1", flip(3.0, "3", to_kubectl=False))
    assert log.complete_since == 0.0
    assert log.used <= log.budget
    log.record(other, "u2", flip(4.0, "4", to_kubectl=False))  # over: time 1.0 goes
    assert log.used <= log.budget
    assert log.dropped == 1
    assert log.complete_since == 1.0
    kept = log.get(KEY)
    assert kept is not None
    assert [t["time"] for t in kept.transitions] == [3.0]
    api = log.get(other)
    assert api is not None
    assert [t["time"] for t in api.transitions] == [2.0, 4.0]


def test_the_log_keeps_a_version_once_and_starts_afresh_on_a_new_uid() -> None:
    log = HistoryLog(start=0.0)
    log.record(KEY, "u1", flip(1.0, "7", to_kubectl=True))
    log.record(KEY, "u1", flip(1.1, "7", to_kubectl=True))  # a second watch saw it too
    kept = log.get(KEY)
    assert kept is not None
    assert len(kept.transitions) == 1
    log.record(KEY, "u9", flip(2.0, "8", to_kubectl=True))
    kept = log.get(KEY)
    assert kept is not None
    assert (kept.uid, [t["time"] for t in kept.transitions]) == ("u9", [2.0])
    assert len(log) == 1
    assert log.used == OBJECT_OVERHEAD + sum(
        len(zlib.compress(orjson.dumps(t))) + ENTRY_OVERHEAD for t in kept.transitions
    )


def test_a_budget_below_one_transition_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        HistoryLog(start=0.0, budget=10)


def served(*transitions: Transition, start: float = 100.0, complete: float | None = None) -> dict:
    return {
        "object": {"group": "apps", "kind": "Deployment", "uid": "u1"},
        "start": start,
        "completeSince": start if complete is None else complete,
        "transitions": [t.to_doc() for t in transitions],
    }


def test_a_field_that_flipped_shows_each_flip_from_the_live_owners_back() -> None:
    live = scaled_away()[0]  # now: ours again
    del live["metadata"]["creationTimestamp"]  # created long before the agent started
    doc = served(flip(110.0, "2", to_kubectl=True), flip(120.0, "3", to_kubectl=False))
    found = view.report("Deployment/ns/web", live, doc)
    assert found.begins == "agent-start"
    assert found.since == 100.0
    [replicas] = found.fields
    assert replicas.path == ".spec.replicas"
    steps = [(s.time, [o[0] for o in s.owners], s.before, s.after) for s in replicas.steps]
    assert steps == [
        (100.0, [OURS], None, None),
        (110.0, ["kubectl-scale"], "2", "5"),
        (120.0, [OURS], "5", "2"),
    ]
    assert found.unchanged == 1  # the container
    text = view.to_text(found)
    assert "when the agent started" in text
    assert "kubectl-scale (Update/scale)  2 -> 5" in text
    doc_out = orjson.loads(view.to_json(found))
    assert [s["owners"][0]["manager"] for s in doc_out["fields"][0]["steps"]] == [
        OURS,
        "kubectl-scale",
        OURS,
    ]


def test_where_the_history_begins() -> None:
    live = scaled_away()[0]
    created = 1767225600.0  # the object's creationTimestamp
    assert view.report("d", live, served(start=created - 5)).begins == "created"
    trimmed = view.report("d", live, served(start=created + 1, complete=created + 50))
    assert (trimmed.begins, trimmed.since) == ("trimmed", created + 50)
    assert "No field changed hands." in view.to_text(trimmed)
    # Another incarnation's history is not this object's.
    other = {**served(flip(created + 60, "2", to_kubectl=True)), "object": {"uid": "someone-else"}}
    assert view.report("d", live, other).fields == ()


def change(old: dict | None, new: dict | None, kind: ChangeType = ChangeType.MODIFIED) -> Change:
    return Change(kind, "ns", "web", old, new)


def test_the_recorder_keeps_changes_of_objects_we_write() -> None:
    recorder = HistoryRecorder(HistoryLog(start=5.0), clock=lambda: 42.0)
    handle = recorder.handler(kinds.DEPLOYMENT)
    old, new = scaled_away()
    handle(change(None, old, ChangeType.ADDED))  # first sight: no transition
    handle(change(old, new))
    handle(change(new, None, ChangeType.DELETED))
    theirs = deployment(1, entry("helm", REPLICAS))
    handle(change(theirs, deployment(1, entry("kubectl-scale", REPLICAS, op="Update"))))
    kept = recorder.log.get(("apps", "Deployment", "ns", "web"))
    assert kept is not None
    assert kept.uid == "u1"
    assert [t["time"] for t in kept.transitions] == [42.0]
    assert recorder.log.kept() == [("apps", "Deployment", "ns", "web")]  # helm's is not ours
    assert recorder.resources[("apps", "Deployment")] == kinds.DEPLOYMENT
