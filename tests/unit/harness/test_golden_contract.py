"""The golden contract matcher (tests/support/golden_contract.py) against upstream's own
matcher tests.

Cases marked "upstream" port deploy/operator/internal/testing/golden/{node,match}_test.go
(ai-dynamo/dynamo 2a6da14c8) with their inputs and expected outcomes; the others are
hand-written from upstream's DESIGN.md and match.go/node.go.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.support.golden_contract import (
    ContractError,
    bind_variables,
    compare_manifests,
    glob_match,
    load_contract,
    match,
    parse_yaml,
)


def node(text: str):
    (doc,) = parse_yaml(textwrap.dedent(text))
    return doc


def contract(text: str) -> list[dict]:
    return load_contract(textwrap.dedent(text))


CONFIGMAP = """
$strict: false
apiVersion: v1
kind: ConfigMap
metadata:
  $strict: false
  name: {name}
{body}
"""


def configmap(name: str, data: dict[str, str] | None = None, kind: str = "ConfigMap") -> dict:
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "test"}}
    if data is not None:
        obj["data"] = data
    return obj


# -- node matching (upstream node_test.go) ----------------------------------------------------


def test_non_strict_mapping_does_not_relax_specified_children():
    """upstream TestNonStrictMappingDoesNotRelaxSpecifiedChildren."""
    actual = {"selected": {"value": "kept", "extra": "rejected"}, "topLevelExtra": "accepted"}
    expected = node("$strict: false\nselected:\n  value: kept\n")
    assert match(expected, actual) == ["$.selected.extra: unexpected field"]
    relaxed = node("$strict: false\nselected:\n  $strict: false\n  value: kept\n")
    assert match(relaxed, actual) == []


def test_match_directives():
    """upstream TestMatchDirectives."""
    expected = node(
        """
        $strict: false
        ignoredScalar: $ignore
        existingScalar: $exists
        absentScalar: $notexists
        ignoredMapping:
          $ignore: true
        absentMapping:
          $notexists: true
        globName: $glob:request-*
        patternName: $pattern:request-[0-9]+
        $$strict: literal
        """
    )
    actual = node(
        """
        ignoredScalar: anything
        existingScalar: 42
        ignoredMapping:
          arbitrary: value
        globName: request-generated
        patternName: request-42
        $strict: literal
        """
    )
    assert match(expected, actual) == []


def test_strict_directive_requires_boolean():
    """upstream TestStrictDirectiveRequiresBoolean."""
    with pytest.raises(ContractError, match=r"\$strict must be a boolean"):
        match(node('$strict: "false"\n'), {"field": "value"})


def test_each_directive_fails_where_it_should():
    assert match(node("a: $notexists\n"), {"a": 1}) == ["$.a: field exists"]
    assert match(node("a: {$notexists: true}\n"), {"a": {}}) == ["$.a: field exists"]
    assert match(node("a: $ignore\n"), {}) == ["$.a: field does not exist"]
    assert match(node("a: $ignore\n"), {"a": {"b": 1}}) == [
        "$.a: node kind is mapping, want scalar"
    ]
    assert match(node("a: {$ignore: true}\n"), {"a": "x"}) == ["$.a: expected a mapping"]
    assert match(node("a: $glob:x-*\n"), {"a": 3}) == ["$.a: glob requires a string"]
    assert match(node("a: $pattern:x\n"), {"a": "xy"}) == ["$.a: 'xy' does not match '$pattern:x'"]
    with pytest.raises(ContractError, match=r"directive \$ignore must be true"):
        match(node("a: {$ignore: false}\n"), {"a": {}})


def test_mappings_are_strict_and_lists_exact_and_ordered():
    assert match(node("a: 1\n"), {"a": 1, "b": 2}) == ["$.b: unexpected field"]
    assert match(node("l: [a, b]\n"), {"l": ["b", "a"]}) == [
        "$.l[0]: value is 'b', want 'a'",
        "$.l[1]: value is 'a', want 'b'",
    ]
    assert match(node("l: [a]\n"), {"l": ["a", "b"]}) == ["$.l: sequence has 2 entries, want 1"]


def test_scalars_compare_by_value_and_yaml_type():
    assert match(node('p: "9090"\n'), {"p": 9090}) == ["$.p: value is 9090, want '9090'"]
    assert match(node("p: 9090\n"), {"p": "9090"}) == ["$.p: value is '9090', want 9090"]
    assert match(node("b: true\n"), {"b": 1}) == ["$.b: value is 1, want True"]
    assert match(node("n: 1\n"), {"n": 1}) == []


def test_plain_scalars_resolve_as_yaml_1_2():
    """go-yaml v3 (upstream's parser) reads these as strings; YAML 1.1 would not."""
    doc = node("a: n\nb: no\nc: on\nd: 0.14.0\ne: 1:20\nf: 2026-01-01\ng: ~\nh: 0x1F\n")
    assert doc == {
        "a": "n",
        "b": "no",
        "c": "on",
        "d": "0.14.0",
        "e": "1:20",
        "f": "2026-01-01",
        "g": None,
        "h": 31,
    }


def test_glob_follows_go_path_match():
    assert glob_match("clusterenv-*-x", "clusterenv-abc-x")
    assert not glob_match("a-*", "a-b/c")  # * never crosses a slash
    assert glob_match("a-?", "a-b")
    assert not glob_match("a-?", "a-/")
    assert glob_match("v[0-9]", "v7")
    assert not glob_match("v[^0-9]", "v7")
    assert glob_match(r"a\*", "a*")
    assert not glob_match(r"a\*", "ab")
    assert glob_match("x-decode-*", "x-decode-")
    assert not glob_match("x-decode-*", "x-decode")


# -- variables (upstream match_test.go) -------------------------------------------------------


def test_resolve_variables_rejects_unknown_variable():
    """upstream TestResolveVariablesRejectsUnknownVariable."""
    (doc,) = contract(
        CONFIGMAP.format(name="generated", body="data:\n  worker-hash: $var:worker-hash")
    )
    with pytest.raises(ContractError, match="unknown variable 'worker-hash'"):
        bind_variables(doc, {})


def test_resolve_variables_match_exact_strings():
    """upstream TestResolveVariablesMatchExactStrings: a bound value is literal."""
    (doc,) = contract(CONFIGMAP.format(name="generated", body="data:\n  value: $var:value"))
    bound = bind_variables(doc, {"value": "$pattern:.*"})
    assert match(bound, configmap("generated", {"value": "any-value"}))
    assert match(bound, configmap("generated", {"value": "$pattern:.*"})) == []


def test_variables_resolve_to_their_value():
    """upstream TestEventuallyMatchManifestsResolvesVariables, without the API client."""
    (doc,) = contract(
        CONFIGMAP.format(name="generated", body="data:\n  worker-hash: $var:worker-hash")
    )
    bound = bind_variables(doc, {"worker-hash": "aabbccdd"})
    assert match(bound, configmap("generated", {"worker-hash": "aabbccdd"})) == []
    assert match(bound, configmap("generated", {"worker-hash": "other"}))


# -- manifest sets (upstream match_test.go compare cases) -------------------------------------


def test_compare_describes_missing_object():
    """upstream TestCompareDescribesMissingObject."""
    docs = contract(CONFIGMAP.format(name="wanted", body=""))
    assert compare_manifests(docs, [], namespace="test") == [
        "ConfigMap test/wanted has not appeared"
    ]


def test_compare_includes_what_differs():
    """upstream TestCompareIncludesManifestDiff: the object and the differing field."""
    docs = contract(CONFIGMAP.format(name="wanted", body="data:\n  key: expected"))
    (problem,) = compare_manifests(docs, [configmap("wanted", {"key": "actual"})], namespace="test")
    assert problem.startswith("ConfigMap test/wanted does not match:")
    assert "$.data.key: value is 'actual', want 'expected'" in problem


def test_compare_matches_exact_sets_across_kinds():
    """upstream TestCompareMatchesExactSetsAcrossKinds."""
    docs = contract(
        CONFIGMAP.format(name="$glob:generated-*", body="data:\n  key: value")
        + "---\n"
        + """
        $strict: false
        apiVersion: v1
        kind: Secret
        metadata:
          $strict: false
          name: credentials
        stringData:
          token: secret
        """
    )
    secret = configmap("credentials", kind="Secret") | {"stringData": {"token": "secret"}}
    actual = [configmap("generated-a1", {"key": "value"}), secret]
    assert compare_manifests(docs, actual, namespace="test") == []


def test_compare_rejects_ambiguous_generated_name():
    """upstream TestCompareRejectsAmbiguousGeneratedName."""
    docs = contract(CONFIGMAP.format(name="$glob:generated-*", body=""))
    (problem,) = compare_manifests(
        docs, [configmap("generated-a"), configmap("generated-b")], namespace="test"
    )
    assert "matches 2 objects" in problem


def test_compare_reports_unexpected_objects_of_a_compared_kind_only():
    docs = contract(CONFIGMAP.format(name="a", body=""))
    actual = [configmap("a"), configmap("b"), configmap("s", kind="Secret")]
    assert compare_manifests(docs, actual, namespace="test") == [
        "unexpected ConfigMap test/b is present"
    ]


def test_two_documents_cannot_claim_one_object():
    docs = contract(
        CONFIGMAP.format(name="$glob:a*", body="") + "---\n" + CONFIGMAP.format(name="a", body="")
    )
    problems = compare_manifests(docs, [configmap("a"), configmap("z")], namespace="test")
    assert problems == ["ConfigMap test/a and document 1 match the same object"]


def test_contract_documents_need_api_version_and_kind():
    with pytest.raises(ContractError, match="kind is required"):
        load_contract("apiVersion: v1\nmetadata: {name: x}\n")
    with pytest.raises(ContractError, match="contains no objects"):
        load_contract("---\n")
