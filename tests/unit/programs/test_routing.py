"""Capabilities and pathway selection: routing.md §1-2 (pure parts)."""

from __future__ import annotations

import pytest

from syncagent.cli.pathways import PROGRAMS
from syncagent.kube import kinds
from syncagent.kube.kinds import DCD, DISAGGREGATED_SET, POD_CLIQUE_SET
from syncagent.programs import routing
from syncagent.programs.capabilities import Setting, offline, resolve
from syncagent.programs.component.program import PATHWAY as COMPONENT
from syncagent.programs.disaggregatedset import routing as ds_routing
from syncagent.programs.grove.routing import ENABLE_GROVE
from syncagent.programs.grove.routing import PATHWAY as GROVE
from syncagent.programs.program import Route
from syncagent.programs.routing import RecordedRouting


class Pathway:
    """The built-in pathways' names, as their packages declare them."""

    GROVE = GROVE
    DISAGGREGATED_SET = ds_routing.PATHWAY
    COMPONENT = COMPONENT


def ds_eligible_condition(selection):
    """``(status, reason, message)`` of the DS program's condition (None: removed)."""
    cond = ds_routing.eligible_condition(selection)
    return None if cond is None else (cond.status, cond.reason, cond.message)


LEADERWORKERSETS = kinds.LEADER_WORKER_SET
DISAGGREGATEDSETS = kinds.DISAGGREGATED_SET
ALL = {kinds.POD_CLIQUE_SET, LEADERWORKERSETS, DISAGGREGATEDSETS}


def detect(served):
    return resolve(served, {}, declared=PROGRAMS.capabilities())


def select(annotations=None, caps=None, *, recorded=None, reason=""):
    """Route with the registry; the DS ineligibility is stubbed to ``reason`` and its calls
    counted (it is only worked out when DS is wanted and Grove did not take the graph)."""
    calls = []

    def ds_ineligibility(components):
        calls.append(1)
        return reason

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ds_routing, "ds_ineligibility", ds_ineligibility)
        selection = route(annotations or {}, [], caps or detect(ALL), recorded=recorded)
    return selection, calls


def route(annotations, components, caps, *, recorded=None):
    return PROGRAMS.select(Route(annotations, components, caps, recorded))


def recorded_from(*, pcs, ds, dcds):
    owned = [k for k, on in ((POD_CLIQUE_SET, pcs), (DISAGGREGATED_SET, ds), (DCD, dcds)) if on]
    return PROGRAMS.recorded_from_children({}, owned)


def test_example_1_new_graph_on_grove():
    selection, _ = select()
    assert selection.pathway is Pathway.GROVE
    assert ds_eligible_condition(selection) is None
    assert selection.record({}).to_status() == {"pathway": "Grove"}
    assert routing.pathway_message(selection) == "workloads are served by the Grove pathway"


def test_example_1b_routed_graph_stays_off_grove():
    recorded = RecordedRouting(Pathway.COMPONENT)
    selection, _ = select(recorded=recorded)
    assert selection.pathway is Pathway.COMPONENT
    assert selection.claim(Pathway.GROVE).held_back
    assert routing.pathway_message(selection) == (
        "workloads are served by the Component pathway; Grove is available: set "
        'nvidia.com/enable-grove: "true" to move this graph to it'
    )


def test_example_1c_annotation_change_lifts_the_exception():
    recorded = RecordedRouting(Pathway.COMPONENT)
    annotations = {"nvidia.com/enable-grove": "true"}
    selection, _ = select(annotations, recorded=recorded)
    assert selection.pathway is Pathway.GROVE
    assert selection.record(annotations).to_status() == {
        "pathway": "Grove",
        "groveAnnotation": "true",
    }


def test_exception_compares_raw_values():
    recorded = RecordedRouting(Pathway.COMPONENT, {ENABLE_GROVE: "True "})
    assert select({"nvidia.com/enable-grove": "True "}, recorded=recorded)[0].pathway is (
        Pathway.COMPONENT
    )
    assert select({"nvidia.com/enable-grove": "True"}, recorded=recorded)[0].pathway is (
        Pathway.GROVE
    )
    # removing the annotation is a change too
    assert select({}, recorded=recorded)[0].pathway is Pathway.GROVE


def test_example_1d_recorded_from_owned_children():
    recorded = recorded_from(pcs=False, ds=False, dcds=True)
    assert recorded == RecordedRouting(Pathway.COMPONENT)
    selection, _ = select(recorded=recorded)
    assert selection.pathway is Pathway.COMPONENT
    assert selection.claim(Pathway.GROVE).held_back
    assert recorded_from(pcs=True, ds=False, dcds=False).pathway is (Pathway.GROVE)
    assert recorded_from(pcs=False, ds=True, dcds=True).pathway is (Pathway.DISAGGREGATED_SET)
    assert recorded_from(pcs=True, ds=False, dcds=True) is None
    assert recorded_from(pcs=False, ds=False, dcds=False) is None


def test_example_1e_ds_fallback_goes_to_component_not_grove():
    annotations = {"nvidia.com/enable-disaggregatedset": "true"}
    recorded = RecordedRouting(Pathway.DISAGGREGATED_SET)
    assert select(annotations, recorded=recorded)[0].pathway is Pathway.DISAGGREGATED_SET
    reason = (
        'component "decode" uses scalingAdapter, but DisaggregatedSet does not support scale '
        "subresource integration"
    )
    selection, _ = select(annotations, recorded=recorded, reason=reason)
    assert selection.pathway is Pathway.COMPONENT
    assert selection.record(annotations).to_status() == {"pathway": "Component"}


def test_example_2_ds_requested_on_grove_cluster():
    selection, calls = select({"nvidia.com/enable-disaggregatedset": "TRUE"})
    assert selection.pathway is Pathway.GROVE
    assert calls == []
    assert ds_eligible_condition(selection) == (
        "False",
        "GroveSelected",
        'Grove pathway takes precedence; set nvidia.com/enable-grove: "false" to use '
        "DisaggregatedSet",
    )


def multinode(name, ctype, **extra):
    return {"name": name, "type": ctype, "multinode": {"nodeCount": 2}, **extra}


DISAGG_MN = [
    {"name": "Frontend", "type": "frontend"},
    multinode("decode", "decode"),
    multinode("prefill", "prefill"),
]


def test_example_3_ds_selected():
    caps = detect(ALL)
    annotations = {
        "nvidia.com/enable-grove": "False",
        "nvidia.com/enable-disaggregatedset": "true",
    }
    selection = route(annotations, DISAGG_MN, caps)
    assert selection.pathway is Pathway.DISAGGREGATED_SET
    assert ds_eligible_condition(selection) == (
        "True",
        "Selected",
        "DisaggregatedSet pathway selected",
    )


def test_example_4_scaling_adapter_falls_back():
    caps = detect(ALL)
    components = [*DISAGG_MN[:1], multinode("decode", "decode", scalingAdapter={}), DISAGG_MN[2]]
    annotations = {"nvidia.com/enable-grove": "false", "nvidia.com/enable-disaggregatedset": "true"}
    selection = route(annotations, components, caps)
    assert selection.pathway is Pathway.COMPONENT
    assert ds_eligible_condition(selection) == (
        "False",
        "FallbackToComponentProgram",
        'component "decode" uses scalingAdapter, but DisaggregatedSet does not support scale '
        "subresource integration",
    )


def test_example_5_ds_api_missing():
    caps = detect({LEADERWORKERSETS})
    selection = route({"nvidia.com/enable-disaggregatedset": "true"}, DISAGG_MN, caps)
    assert selection.pathway is Pathway.COMPONENT
    assert (
        selection.claim(Pathway.DISAGGREGATED_SET).reason == "DisaggregatedSet API is not available"
    )


def test_example_6_leading_space_is_not_wanted():
    caps = detect({LEADERWORKERSETS, DISAGGREGATEDSETS})
    selection, calls = select({"nvidia.com/enable-disaggregatedset": " true"}, caps)
    assert selection.pathway is Pathway.COMPONENT
    assert not selection.claim(Pathway.DISAGGREGATED_SET).wanted
    assert calls == []
    assert ds_eligible_condition(selection) is None


def test_grove_opt_out_is_case_insensitive():
    assert select({"nvidia.com/enable-grove": "FALSE"})[0].pathway is Pathway.COMPONENT
    assert select({"nvidia.com/enable-grove": " false"})[0].pathway is Pathway.GROVE
    no_grove = offline({"grove": Setting.FALSE}, declared=PROGRAMS.capabilities())
    assert select({}, no_grove)[0].pathway is Pathway.COMPONENT


@pytest.mark.parametrize(
    ("components", "reason"),
    [
        (
            [multinode("decode", "decode")],
            "DisaggregatedSet requires at least two eligible multinode worker roles",
        ),
        (
            [multinode("prefill", "prefill", replicas=0), multinode("decode", "decode")],
            "DisaggregatedSet requires replicas to be zero for all selected roles or positive "
            "for all selected roles",
        ),
        (
            [multinode(f"p{i}", "prefill") for i in range(11)],
            "DisaggregatedSet supports at most 10 roles",
        ),
        ([{"name": "w", "type": "worker"}], "no eligible multinode worker roles found"),
        (
            [{"name": "f", "type": "frontend", "multinode": {"nodeCount": 2}}],
            "no eligible multinode worker roles found",
        ),
        ([*DISAGG_MN, {"name": "extra", "type": "worker"}], ""),
    ],
)
def test_ds_ineligibility(components, reason):
    assert ds_routing.ds_ineligibility(components) == reason


def test_recorded_routing_round_trip():
    assert RecordedRouting.from_status(None) is None
    assert RecordedRouting.from_status({"pathway": "Component"}) == RecordedRouting(
        Pathway.COMPONENT
    )
    rec = RecordedRouting(Pathway.GROVE, {ENABLE_GROVE: ""})
    assert rec.to_status() == {"pathway": "Grove", "groveAnnotation": ""}
    assert RecordedRouting.from_status(rec.to_status()) == rec
    # another pathway's recorded annotation: under ``annotations``, Grove's stays where it was
    both = RecordedRouting(Pathway.GROVE, {ENABLE_GROVE: "true", "example.com/x": "1"})
    assert both.to_status() == {
        "pathway": "Grove",
        "groveAnnotation": "true",
        "annotations": {"example.com/x": "1"},
    }
    assert RecordedRouting.from_status(both.to_status()) == both
