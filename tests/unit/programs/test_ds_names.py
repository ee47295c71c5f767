"""DisaggregatedSet naming (disaggregatedset.md §2) and eligibility (§1)."""

from __future__ import annotations

import pytest

from syncagent.programs.disaggregatedset.render import child_name, ds_name, role_names
from syncagent.programs.disaggregatedset.routing import ds_ineligibility
from tests.support.graphs import frontend, typed_components, worker


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ("vllm-disagg", "vllm-disagg"),
        ("sglang-disagg-multinode", "sglang-di-c7ebc4fb"),
        ("aaaaaaaa-bbbbbbbbbb", "aaaaaaaa-ad6e47d4"),
        ("llm.Prod", "llm-prod"),
    ],
)
def test_ds_name(graph: str, expected: str) -> None:
    assert ds_name(graph) == expected
    assert len(ds_name(graph)) <= 18


@pytest.mark.parametrize(
    ("components", "expected"),
    [
        ([("prefill", "prefill"), ("decode", "decode")], ["prefill", "decode"]),
        (
            [("VllmDecodeWorker", "worker"), ("VllmPrefillWorker", "worker")],
            ["v-965f533f", "v-e255329e"],
        ),
        ([("x", "decode"), ("decode", "worker")], ["decode", "decode-2"]),
    ],
)
def test_role_names(components: list[tuple[str, str]], expected: list[str]) -> None:
    roles = role_names(typed_components([{"name": n, "type": t} for n, t in components]))
    assert list(roles.values()) == expected


def test_many_colliding_roles_stay_within_ten() -> None:
    comps = [{"name": f"decode.{i}" if i else "decode", "type": "decode"} for i in range(10)]
    roles = list(role_names(typed_components(comps)).values())
    assert len(set(roles)) == 10
    assert all(len(r) <= 10 for r in roles)


def test_child_name_budget_v010() -> None:
    name = child_name("sglang-di-c7ebc4fb", "0123abcd", "v-965f533f", slice_index=99)
    assert len(name) == 41
    # the worker StatefulSet revision label and the private Service fit a DNS label
    assert len(f"{name}-2147483647-0123456789") == 63
    assert len(f"{name}-prv") <= 63


def test_names_of_a_55_character_graph_fit_both_schemes() -> None:
    graph = "a" * 20 + "-" + "b" * 34
    assert len(graph) == 55
    ds = ds_name(graph)
    both = [{"name": "prefill", "type": "prefill"}, {"name": "decode", "type": "decode"}]
    for role in role_names(typed_components(both)).values():
        for name in (
            child_name(ds, "deadbeef", role),
            child_name(ds, "deadbeef", role, slice_index=99),
        ):
            assert len(f"{name}-2147483647-0123456789") <= 63
            assert len(f"{name}-prv") <= 63


def _reason(components: list[dict]) -> str:
    return ds_ineligibility(components)


def test_example_graph_is_eligible_and_frontend_not_selected() -> None:
    comps = [frontend(), worker("decode", "decode"), worker("prefill", "prefill")]
    assert _reason(comps) == ""
    assert role_names(typed_components([c for c in comps if "multinode" in c])) == {
        "decode": "decode",
        "prefill": "prefill",
    }


def test_only_one_multinode_role() -> None:
    comps = [frontend(), worker("decode", "decode"), worker("prefill", "prefill", nodes=1)]
    assert (
        _reason(comps) == "DisaggregatedSet requires at least two eligible multinode worker roles"
    )


def test_mixed_zero_and_positive_replicas() -> None:
    comps = [worker("prefill", "prefill", replicas=0), worker("decode", "decode")]
    assert _reason(comps) == (
        "DisaggregatedSet requires replicas to be zero for all selected roles or positive for "
        "all selected roles"
    )


def test_eleven_roles() -> None:
    comps = [worker(f"p{i}", "prefill") for i in range(11)]
    assert _reason(comps) == "DisaggregatedSet supports at most 10 roles"


def test_single_node_worker_next_to_roles_is_eligible() -> None:
    comps = [
        frontend(),
        worker("decode", "decode"),
        worker("prefill", "prefill"),
        worker("extra", "worker", nodes=1),
    ]
    assert _reason(comps) == ""


def test_scaling_adapter_reason() -> None:
    comps = [worker("decode", "decode", scalingAdapter={}), worker("prefill", "prefill")]
    assert _reason(comps) == (
        'component "decode" uses scalingAdapter, but DisaggregatedSet does not support scale '
        "subresource integration"
    )
