"""Events that follow from a status change, stale DCD detection and which writes raise events."""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.cli.pathways import PROGRAMS
from syncagent.programs import routing, status
from syncagent.programs.capabilities import Capabilities
from syncagent.programs.component.program import PATHWAY as COMPONENT
from syncagent.programs.context import GraphContext, build_status, routing_record, status_events
from syncagent.programs.disaggregatedset.routing import PATHWAY as DS
from syncagent.programs.fights import graph_of_component
from syncagent.programs.program import Claim
from syncagent.programs.removal import stale_dcds
from syncagent.programs.view import DictStore
from syncagent.programs.writes import RefusedError, Writer, _visible, forced_event
from syncagent.render import Rendered
from syncagent.runtime.events import ObjectRef
from syncagent.ssa import ChangeSetEntry, Conflict, OwnerRef, OwnershipError
from syncagent.ssa.takeover import TakeoverPolicy

CAPS = Capabilities({"grove": False, "lws": True, "disaggregatedSet": False})


def ctx(
    previous: dict[str, Any] | None = None, *, selection: routing.Selection | None = None
) -> GraphContext:
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "x", "namespace": "ns", "uid": "u1", "generation": 2},
        "spec": {"components": []},
    }
    if previous is not None:
        graph["status"] = previous
    return GraphContext(
        graph=graph,
        caps=CAPS,
        selection=selection or routing.Selection(COMPONENT),
        recorded=None,
        store=DictStore(),
        writer=None,  # type: ignore[arg-type]  # not used by status computation
        now="2026-01-01T00:00:00Z",
        programs=PROGRAMS,
    )


def test_validation_failed_event_only_when_the_message_appears_or_changes():
    c = ctx()
    first = build_status(c, status.failed("validation_failed", "spec.components: bad"))
    assert [e.reason for e in status_events(c, first)] == ["ValidationFailed"]
    again = ctx(first)
    same = build_status(again, status.failed("validation_failed", "spec.components: bad"))
    assert status_events(again, same) == []
    other = build_status(again, status.failed("validation_failed", "spec.components: worse"))
    assert [e.message for e in status_events(again, other)] == ["spec.components: worse"]


def test_a_refusal_is_reported_as_ownership_conflict_not_reconcile_error():
    c = ctx()
    built = build_status(c, status.failed("failed_to_reconcile_the_resources", "refusing"))
    assert [e.reason for e in status_events(c, built, refused=True)] == ["OwnershipConflict"]
    assert [e.reason for e in status_events(c, built)] == ["ReconcileError"]


def test_routing_is_recorded_once_and_kept_while_invalid():
    c = ctx()
    assert routing_record(c) == {"pathway": "Component"}
    previous = {"routing": {"pathway": "Grove", "groveAnnotation": "x"}}
    assert routing_record(ctx(previous), keep=True) == previous["routing"]
    assert routing_record(ctx(previous)) == {"pathway": "Component"}


def test_pathway_change_and_ds_fallback_events():
    before = build_status(ctx(), status.failed("x", "y"))
    before["conditions"] = [
        {**cond, "reason": "Grove"} if cond["type"] == "WorkloadPathway" else cond
        for cond in before["conditions"]
    ]
    fallback = routing.Selection(
        COMPONENT,
        {DS: Claim(False, wanted=True, reason="no roles")},
    )
    c = ctx(before, selection=fallback)
    built = build_status(c, status.failed("x", "y"))
    reasons = [e.reason for e in status_events(c, built)]
    assert reasons == ["WorkloadPathwayChanged", "DisaggregatedSetFallback"]
    assert status.find(built["conditions"], "DisaggregatedSetEligible")["message"] == "no roles"
    again = ctx(built, selection=fallback)
    assert status_events(again, build_status(again, status.failed("x", "y"))) == []


def dcd(name: str, component: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"name": component}}


def test_stale_dcds_removed_and_renamed():
    live = [dcd("x-decode", "decode"), dcd("x-old", "old"), dcd("x-decode-1a2b3c4d", "decode")]
    stale = stale_dcds(live, rendered_names={"decode": "x-decode"})
    assert [d["metadata"]["name"] for d in stale.removed] == ["x-old"]
    assert [d["metadata"]["name"] for d in stale.replaced] == ["x-decode-1a2b3c4d"]


def entry(action: str, *differences: str) -> ChangeSetEntry:
    return ChangeSetEntry(
        action=action, subject="Deployment/ns/x", object={}, manager="m", differences=differences
    )  # type: ignore[arg-type]


def test_only_real_changes_raise_write_events():
    assert _visible(entry("created"))
    assert _visible(entry("configured", ".spec"))
    assert not _visible(entry("configured", "managedFields[manager=syncagent/workloads]"))
    assert not _visible(entry("unchanged"))


def test_a_forced_conflict_event_names_paths_and_managers():
    entry = ChangeSetEntry(
        action="configured",
        subject="Deployment/ns/x-frontend",
        object={},
        manager="syncagent/workloads",
        conflicts=(
            Conflict(".spec.replicas", "kubectl", "autoscaling/v1"),
            Conflict(".spec.template.spec.containers[name=main].image", "kubectl-edit", "apps/v1"),
        ),
    )
    event = forced_event(entry, on=None)
    assert (event.type, event.reason) == ("Warning", "ForcedConflict")
    assert event.message.startswith(
        "Deployment/ns/x-frontend: syncagent/workloads took .spec.replicas from 'kubectl'; "
        ".spec.template.spec.containers[name=main].image from 'kubectl-edit'"
    )


def test_a_components_fights_are_reported_on_its_graph():
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": "x-frontend",
            "namespace": "ns",
            "uid": "d1",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "keeper", "uid": "k"},
                {
                    "apiVersion": "nvidia.com/v1beta1",
                    "kind": "DynamoGraphDeployment",
                    "name": "x",
                    "uid": "u1",
                    "controller": True,
                },
            ],
        },
    }
    assert ObjectRef.of(graph_of_component(dcd)) == ObjectRef(
        "nvidia.com/v1beta1", "DynamoGraphDeployment", "ns", "x", "u1"
    )
    standalone = {**dcd, "metadata": {**dcd["metadata"], "ownerReferences": []}}
    assert graph_of_component(standalone) is standalone


def test_a_refusal_names_the_object_first_and_keeps_the_spec_text() -> None:
    # routing.md §3 example 10: the condition/event text is the spec's; the exception (and the
    # log line built from it) starts with Kind/namespace/name, like every engine error.
    owner = OwnerRef("nvidia.com/v1beta1", "DynamoGraphDeployment", "x", "uid-x")
    foreign = OwnerRef("apps/v1", "Deployment", "other", "uid-other")
    live = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": "x-decode",
            "namespace": "ns",
            "ownerReferences": [foreign.item(controller=True)],
        },
    }
    rendered = Rendered(
        "syncagent/dcd", "nvidia.com/v1beta1", "DynamoComponentDeployment", "x-decode", "ns", {}
    )
    with pytest.raises(RefusedError) as info:
        Writer(applier=None, takeover=TakeoverPolicy()).check_may_control(rendered, live, owner)  # type: ignore[arg-type]
    assert isinstance(info.value, OwnershipError)
    assert str(info.value).startswith("DynamoComponentDeployment/ns/x-decode: ")
    assert info.value.message == (
        "refusing to reconcile DynamoComponentDeployment x-decode because it is not controlled "
        "by DynamoGraphDeployment ns/x"
    )
