"""Synthetic plan records and golden-file helpers shared by the inspect unit tests (no tests).

Every object is written here; nothing is read from a cluster or from reference material.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from syncagent.cli.pathways import PROGRAMS
from syncagent.inspect.planapplier import Deleted, Recorded, Records, Refused
from syncagent.inspect.planner import PlanRun
from syncagent.ssa import ChangeSetEntry, Conflict

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "tools"
UPDATE = os.environ.get("SYNCAGENT_UPDATE_GOLDEN") == "1"
NS = "demo"
GRAPH_UID = "0b7c1d2e-0000-4000-8000-000000000001"
DCD_UID = "0b7c1d2e-0000-4000-8000-000000000002"


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with tests/golden/tools/<name>; SYNCAGENT_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}; run with SYNCAGENT_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"output differs from {path}"


def entry_mf(
    manager: str,
    fields: dict[str, Any],
    *,
    operation: str = "Apply",
    subresource: str = "",
    time: str = "2026-11-29T15:00:00Z",
    api_version: str = "apps/v1",
) -> dict[str, Any]:
    out = {
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        out["subresource"] = subresource
    return out


def controller_ref(kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def deployment(
    name: str,
    *,
    replicas: int,
    image: str = "img:1",
    rv: str = "10",
    managed: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": rv,
            "labels": {"app": name},
            "ownerReferences": [controller_ref("DynamoComponentDeployment", name, DCD_UID)],
            "managedFields": managed or [],
        },
        "spec": {
            "replicas": replicas,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


def desired_of(obj: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(obj)
    meta = body["metadata"]
    for key in ("uid", "resourceVersion", "managedFields", "ownerReferences"):
        meta.pop(key, None)
    return body


def _subject(obj: dict[str, Any]) -> str:
    return f"{obj['kind']}/{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def record(
    records: Records,
    *,
    before: dict | None,
    after: dict,
    manager: str,
    action: str,
    conflicts: tuple[Conflict, ...] = (),
    differences: tuple[str, ...] = (),
) -> None:
    subject = _subject(after)
    entry = ChangeSetEntry(
        action=action,
        subject=subject,
        object=after,
        manager=manager,
        before=before,
        conflicts=conflicts,
        differences=differences,
        dry_run=True,
    )
    records.see(subject)
    records.real.setdefault(subject, before)
    records.composed[subject] = after
    records.applies.append(Recorded(subject, manager, desired_of(after), entry, True))


def sample_records() -> Records:
    """One object per action, a takeover and a refused non-forced apply."""
    records = Records()
    workloads = entry_mf("syncagent/workloads", {"f:spec": {"f:replicas": {}}})
    # created
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "g-frontend",
            "namespace": NS,
            "ownerReferences": [controller_ref("DynamoComponentDeployment", "g-frontend", DCD_UID)],
        },
        "spec": {"ports": [{"name": "http", "port": 8000, "protocol": "TCP"}], "type": "ClusterIP"},
    }
    record(records, before=None, after=svc, manager="syncagent/services", action="created")
    # configured: replicas 1 -> 3; server default progressDeadlineSeconds equal on both sides
    live = deployment("g-frontend", replicas=1, managed=[workloads])
    record(
        records,
        before=live,
        after=deployment("g-frontend", replicas=3, managed=[workloads]),
        manager="syncagent/workloads",
        action="configured",
        differences=(".spec",),
    )
    # unchanged
    same = deployment("g-worker", replicas=2, managed=[workloads])
    record(
        records,
        before=same,
        after=copy.deepcopy(same),
        manager="syncagent/workloads",
        action="unchanged",
    )
    # conflict with another team's Update
    other = entry_mf(
        "other-team",
        {
            "f:spec": {
                "f:template": {"f:spec": {"f:containers": {'k:{"name":"main"}': {"f:image": {}}}}}
            }
        },
        operation="Update",
    )
    live = deployment("g-prefill", replicas=1, image="other:1", managed=[workloads, other])
    record(
        records,
        before=live,
        after=deployment("g-prefill", replicas=1, image="img:1", managed=[workloads]),
        manager="syncagent/workloads",
        action="configured",
        conflicts=(
            Conflict(".spec.template.spec.containers[name=main].image", "other-team", "apps/v1"),
        ),
        differences=(".spec",),
    )
    # takeover: a Deployment last written by the upstream operator through Update
    upstream = entry_mf(
        "manager",
        {
            "f:metadata": {
                "f:labels": {"f:app": {}, "f:nvidia.com/old": {}},
                "f:ownerReferences": {f'k:{{"uid":"{DCD_UID}"}}': {}},
            },
            "f:spec": {"f:replicas": {}},
        },
        operation="Update",
    )
    live = deployment("g-decode", replicas=1, managed=[upstream])
    live["metadata"]["labels"]["nvidia.com/old"] = "x"
    record(
        records,
        before=live,
        after=copy.deepcopy(live),
        manager="syncagent/workloads",
        action="configured",
        conflicts=(Conflict(".metadata.labels.nvidia.com/old", "manager", "apps/v1"),),
        differences=("managedFields[manager=syncagent/workloads]",),
    )
    # would-delete
    stale = deployment("g-old", replicas=1)
    records.see(_subject(stale))
    records.deletes.append(Deleted(_subject(stale), stale))
    # refused: a non-forced co-owner apply
    model = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "dynamo-model-1234abcd", "namespace": NS},
    }
    records.see(_subject(model))
    records.real[_subject(model)] = {
        **model,
        "metadata": {**model["metadata"], "labels": {"team": "b"}},
    }
    records.refused.append(
        Refused(
            _subject(model),
            f"syncagent/owner/{GRAPH_UID}",
            {**model, "metadata": {**model["metadata"], "labels": {"team": "a"}}},
            (Conflict(".metadata.labels.team", "team-b"),),
        )
    )
    return records


def sample_run(records: Records) -> PlanRun:
    """A PlanRun shell around ``records`` (the engine is never called by the report)."""
    run = PlanRun.__new__(PlanRun)
    run.applier = type("FakeApplier", (), {"records": records})()  # type: ignore[assignment]
    run.programs = PROGRAMS
    run.inputs = []
    run.errors = []
    run.live = {}
    run.status_writes = []
    run.events = []
    return run
