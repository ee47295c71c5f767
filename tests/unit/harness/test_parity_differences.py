"""The list of deliberate differences (tests/support/parity_differences.py): parsing
docs/parity.md and editing upstream's expectations by exactly the listed changes. Hand-written
cases."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.golden_contract import NOTEXISTS, compare_manifests, match
from tests.support.parity_differences import (
    DifferencesError,
    Segment,
    apply_differences,
    parse_differences,
    parse_path,
)

REPO = Path(__file__).resolve().parents[3]


def doc_md(*sections: str) -> str:
    return "# Parity\n\n## Deliberate differences\n\n" + "\n".join(
        textwrap.dedent(s) for s in sections
    )


def section(ident: str, block: str, reason: str = "Because.") -> str:
    return (
        f"### {ident}. Title {ident}\n\n{reason}\n\n```yaml parity\n{textwrap.dedent(block)}```\n"
    )


def one(block: str):
    (difference,) = parse_differences(doc_md(section("D1", block)))
    return difference


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"$strict": False, "name": "$glob:x-decode-*"},
    "spec": {
        "template": {
            "metadata": {"labels": {"a": "1", "nvidia.com/dynamo-worker-hash": "$var:worker-hash"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "env": [
                            {"name": "A", "value": "1"},
                            {"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": "$var:worker-hash"},
                        ],
                        "resources": {},
                    }
                ]
            },
        }
    },
}


def test_paths():
    assert parse_path('a."x.y/z"[name=main].*.**[*]') == (
        Segment("key", "a"),
        Segment("key", "x.y/z"),
        Segment("select", "name", "main"),
        Segment("any"),
        Segment("deep"),
        Segment("item"),
    )
    for bad in ("", ".a", "a..b", 'a."b'):
        with pytest.raises(DifferencesError):
            parse_path(bad)


def test_absent_in_a_list_removes_the_item_and_in_a_mapping_asserts_absence():
    difference = one(
        """
        cases: [c]
        changes:
          - path: '**.env[name=DYN_NAMESPACE_WORKER_SUFFIX]'
            absent: true
          - path: '**.labels."nvidia.com/dynamo-worker-hash"'
            absent: true
        """
    )
    (edited,), counts = apply_differences([DEPLOYMENT], [difference])
    assert counts == {"D1": 2}
    main = edited["spec"]["template"]["spec"]["containers"][0]
    assert main["env"] == [{"name": "A", "value": "1"}]
    labels = edited["spec"]["template"]["metadata"]["labels"]
    assert labels == {"a": "1", "nvidia.com/dynamo-worker-hash": NOTEXISTS}
    assert DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]["env"][1]["name"] == (
        "DYN_NAMESPACE_WORKER_SUFFIX"
    ), "the input is not modified"
    assert match(labels, {"a": "1"}) == []
    assert match(labels, {"a": "1", "nvidia.com/dynamo-worker-hash": "h"})


def test_a_mapping_left_with_only_absent_fields_is_absent():
    contract = {
        "kind": "DynamoComponentDeployment",
        "spec": {"podTemplate": {"metadata": {"annotations": {"o": "$pattern:1"}}, "spec": {}}},
    }
    difference = one("cases: [c]\nchanges:\n  - path: '**.annotations.o'\n    absent: true\n")
    (edited,), _ = apply_differences([contract], [difference])
    assert edited["spec"]["podTemplate"] == {"metadata": NOTEXISTS, "spec": {}}


def test_rewrite_value_and_where():
    difference = one(
        r"""
        cases: [c]
        documents: [Deployment]
        changes:
          - path: metadata.name
            rewrite: {pattern: '^\$glob:(.+)-\*$', to: '\1'}
          - path: '**.containers[*].resources'
            where: {}
            absent: true
          - path: spec.template.metadata.labels.role
            value: leader
        """
    )
    other_kind = {**DEPLOYMENT, "kind": "StatefulSet"}
    (edited, untouched), counts = apply_differences([DEPLOYMENT, other_kind], [difference])
    assert counts == {"D1": 3}
    assert edited["metadata"]["name"] == "x-decode"
    assert edited["spec"]["template"]["spec"]["containers"][0]["resources"] == NOTEXISTS
    assert edited["spec"]["template"]["metadata"]["labels"]["role"] == "leader"
    assert untouched == other_kind


def test_where_skips_other_values_and_a_change_that_matches_nothing_counts_zero():
    difference = one(
        """
        cases: [c]
        changes:
          - path: '**.containers[*].resources'
            where: {limits: {cpu: 1}}
            absent: true
          - path: '**.env[name=NOT_THERE]'
            absent: true
        """
    )
    (edited,), counts = apply_differences([DEPLOYMENT], [difference])
    assert counts == {"D1": 0}
    assert edited == DEPLOYMENT


def test_an_unlisted_difference_still_fails_the_comparison():
    difference = one(
        "cases: [c]\nchanges:\n  - path: '**.env[name=DYN_NAMESPACE_WORKER_SUFFIX]'\n"
        "    absent: true\n"
    )
    contract = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"$strict": False, "name": "x"},
        "data": {"env": [{"name": "DYN_NAMESPACE_WORKER_SUFFIX"}], "other": "want"},
    }
    edited, _ = apply_differences([contract], [difference])
    actual = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x"},
        "data": {"env": [], "other": "got"},
    }
    assert compare_manifests(edited, [actual], namespace="ns") == [
        "ConfigMap ns/x does not match:\n  $.data.other: value is 'got', want 'want'"
    ]


def test_cases_are_globs():
    difference = one("cases: [golden/dgd/*, dgdr/lws]\nchanges:\n  - path: a\n    absent: true\n")
    assert difference.applies_to("golden/dgd/grove")
    assert difference.applies_to("dgdr/lws")
    assert not difference.applies_to("dgdr/grove")
    assert not difference.applies_to("golden/dcd/lws")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            section("D1", "cases: [c]\nchanges:\n  - path: a\n    absent: true\n", reason=""),
            "reason",
        ),
        ("### D1. T\n\nWhy.\n", "exactly one"),
        (section("D1", "changes:\n  - path: a\n    absent: true\n"), "needs cases"),
        (section("D1", "cases: [c]\nchanges:\n  - path: a\n"), "one of absent"),
        (section("D1", "cases: [c]\nchanges:\n  - path: a\n    absent: false\n"), "absent must"),
        (
            section("D1", "cases: [c]\nchanges:\n  - {path: a, absent: true}\n")
            + section("D1", "cases: [c]\nchanges:\n  - {path: a, absent: true}\n"),
            "duplicate",
        ),
    ],
)
def test_malformed_lists_are_rejected(text, message):
    with pytest.raises(DifferencesError, match=message):
        parse_differences(doc_md(text))


def test_the_projects_list_parses_with_a_reason_for_each_entry():
    differences = parse_differences((REPO / "docs" / "parity.md").read_text())
    assert differences
    for difference in differences:
        assert len(difference.reason) > 40, difference.id
        assert difference.cases


SERVICE = {
    "kind": "Service",
    "metadata": {
        "name": "dynamo-model-1",
        "labels": {"x": "1"},
        "annotations": {"keep": "k", "graph/note": "n"},
        "ownerReferences": [{"kind": "DynamoGraphDeployment", "name": "g"}],
    },
    "spec": {"selector": {"c": "decode"}},
}
CONTAINER = {
    "name": "main",
    "ports": [{"name": "nixl", "containerPort": 1}],
    "readinessProbe": {"httpGet": {"port": "system"}},
}


def test_exists_copy_and_keep():
    difference = one(
        """\
        cases: ['*']
        documents: [Service/dynamo-model-*]
        changes:
          - path: spec.selector.c
            exists: true
          - path: metadata.labels.graph
            copy: metadata.ownerReferences[kind=DynamoGraphDeployment].name
          - path: metadata.annotations
            keep: [keep]
        """
    )
    other = SERVICE | {"metadata": SERVICE["metadata"] | {"name": "g-decode"}}
    (edited, untouched), counts = apply_differences([SERVICE, other], [difference])
    assert edited["spec"]["selector"]["c"] == "$exists"
    assert edited["metadata"]["labels"] == {"x": "1", "graph": "g"}
    assert edited["metadata"]["annotations"] == {"keep": "k"}
    assert counts == {"D1": 3}
    assert untouched == other  # its name is not selected


def test_append_only_beside_a_probe_naming_the_port_and_only_once():
    difference = one(
        """\
        cases: ['*']
        changes:
          - path: 'containers[name=main].ports'
            append: {name: system, containerPort: 9090}
            beside: {path: '*.httpGet.port', equals: system}
          - path: 'containers[name=main].ports'
            append: {name: http, containerPort: 8000}
            beside: {path: '*.httpGet.port', equals: http}
        """
    )
    pod = {"kind": "Pod", "containers": [CONTAINER]}
    (edited,), counts = apply_differences([pod], [difference])
    assert [p["name"] for p in edited["containers"][0]["ports"]] == ["nixl", "system"]
    assert counts == {"D1": 1}
    (again,), counts = apply_differences([edited], [difference])
    assert again == edited
    assert counts == {"D1": 0}


def test_when_a_related_object_holds_the_value():
    difference = one(
        """\
        cases: ['*']
        documents: [Service]
        changes:
          - path: spec.selector.role
            value: leader
            when:
              document: PodCliqueSet
              path: cliques[name=*-ldr].labels.c
              equals: spec.selector.c
        """
    )
    pcs = {"kind": "PodCliqueSet", "cliques": [{"name": "decode-ldr", "labels": {"c": "decode"}}]}
    prefill = SERVICE | {"spec": {"selector": {"c": "prefill"}}}
    (decode, single, _), _ = apply_differences([SERVICE, prefill, pcs], [difference])
    assert decode["spec"]["selector"]["role"] == "leader"
    assert "role" not in single["spec"]["selector"]


def test_copy_creates_the_mapping_go_omitted():
    difference = one(
        """\
        cases: ['*']
        changes:
          - path: metadata.labels.c
            copy: spec.selector.c
          - path: metadata.labels.d
            copy: spec.selector.missing
        """
    )
    bare = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"c": "x"}}}
    (edited,), counts = apply_differences([bare], [difference])
    assert edited["metadata"]["labels"] == {"c": "x"}
    assert counts == {"D1": 1}
