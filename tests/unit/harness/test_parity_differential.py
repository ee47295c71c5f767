"""The differential parity tier's comparison (tests/parity/support/differential.py): it reports
every difference it should, with path and both values, and nothing that is only a matter of
representation."""

from __future__ import annotations

import copy
from typing import Any

from tests.parity.support.differential import Pathway, compare, ours_for_comparison, prune
from tests.support.parity_differences import apply_differences, parse_differences

LWS = "leaderworkerset.x-k8s.io/v1"
WORKER_HASH_DIFFERENCE = """
### D9. No worker-hash label

The reason, written out at length as the real list requires of every entry.

```yaml parity
cases: [diff/*]
changes:
  - path: '**.labels."nvidia.com/dynamo-worker-hash"'
    absent: true
```
"""


def deployment(**extra_env: str) -> dict[str, Any]:
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    env += [{"name": k, "value": v} for k, v in extra_env.items()]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "g-worker", "labels": {"app": "x"}},
        "spec": {
            "template": {"spec": {"containers": [{"name": "main", "env": env, "resources": {}}]}}
        },
    }


def test_identical_objects_do_not_diverge() -> None:
    assert compare([deployment()], [deployment()], []).divergences == []


def test_a_changed_value_is_reported_with_its_path_and_both_values() -> None:
    ours = deployment()
    ours["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] = "3"
    (found,) = compare([deployment()], [ours], []).divergences
    assert found.path == "spec.template.spec.containers[name=main].env[name=B].value"
    assert (found.upstream, found.ours) == ("2", "3")


def test_a_reordered_list_is_reported() -> None:
    ours = deployment()
    env = ours["spec"]["template"]["spec"]["containers"][0]["env"]
    env.reverse()
    (found,) = compare([deployment()], [ours], []).divergences
    assert found.path.endswith("env (order of names)")


def test_an_item_or_object_on_one_side_only_is_reported_once() -> None:
    found = compare([deployment(C="x")], [deployment()], []).divergences
    assert [d.path for d in found] == ["spec.template.spec.containers[name=main].env[name=C]"]
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    (missing,) = compare([deployment(), service], [deployment()], []).divergences
    assert (missing.kind, missing.path) == ("Service", "(object)")


def test_representation_is_not_a_difference() -> None:
    ours = prune(deployment())
    assert "resources" not in ours["spec"]["template"]["spec"]["containers"][0]
    assert compare([deployment()], [ours], []).divergences == []


def test_only_a_listed_difference_is_forgiven_and_it_counts_its_edits() -> None:
    upstream = deployment()
    upstream["metadata"]["labels"]["nvidia.com/dynamo-worker-hash"] = "0123abcd"
    listed = parse_differences(WORKER_HASH_DIFFERENCE)
    comparison = compare([upstream], [deployment()], listed)
    assert comparison.divergences == []
    assert comparison.edits == {"D9": 1}
    unlisted = compare([upstream], [deployment()], []).divergences
    assert [d.path for d in unlisted] == ['metadata.labels."nvidia.com/dynamo-worker-hash"']


def test_a_disaggregatedset_role_is_compared_as_the_leaderworkerset_upstream_renders() -> None:
    role_spec = {"replicas": 1, "leaderWorkerTemplate": {"size": 2}}
    ds = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "g-short", "labels": {"nvidia.com/dynamo-graph-deployment-name": "g"}},
        "spec": {"roles": [{"name": "decode", "spec": copy.deepcopy(role_spec)}]},
    }
    (lws,) = ours_for_comparison([{"object": ds}], pathway=Pathway.DISAGGREGATEDSET)
    assert lws["metadata"]["name"] == "g-decode-0"
    upstream = {"apiVersion": LWS, "kind": "LeaderWorkerSet", "metadata": {"name": "g-decode-0"}}
    assert compare([{**upstream, "spec": role_spec}], [lws], []).divergences == []
    changed = {**upstream, "spec": {**role_spec, "replicas": 2}}
    (found,) = compare([changed], [lws], []).divergences
    assert found.path == "spec.replicas"


ROLE_LABEL_DIFFERENCE = """
### D8. Role label on leader cliques

The reason, written out at length as the real list requires of every entry.

```yaml parity
cases: [diff/*]
changes:
  - path: spec.template.cliques[name=*-ldr].labels.role
    value: leader
```
"""


def clique(name: str) -> dict[str, Any]:
    return {"name": name, "labels": {"app": "x"}}


def test_a_select_with_a_glob_edits_only_the_items_it_matches() -> None:
    pcs = {
        "kind": "PodCliqueSet",
        "metadata": {"name": "g"},
        "spec": {"template": {"cliques": [clique("decode-ldr"), clique("decode-wkr")]}},
    }
    (edited,), edits = apply_differences([pcs], parse_differences(ROLE_LABEL_DIFFERENCE))
    assert edited["spec"]["template"]["cliques"] == [
        {"name": "decode-ldr", "labels": {"app": "x", "role": "leader"}},
        clique("decode-wkr"),
    ]
    assert edits == {"D8": 1}


def test_an_exists_difference_forgives_the_value_not_the_absence() -> None:
    upstream = [{"kind": "ConfigMap", "metadata": {"name": "s"}, "data": {"x": "$exists"}}]
    ours = copy.deepcopy(upstream)
    ours[0]["data"]["x"] = "our own text"
    assert compare(upstream, ours, []).divergences == []
    del ours[0]["data"]["x"]
    (missing,) = compare(upstream, ours, []).divergences
    assert missing.path == "data.x"


def test_overlong_label_values_are_found_in_pod_templates_too() -> None:
    from tests.parity.support.differential import overlong_labels

    pcs = {"spec": {"cliques": [{"labels": {"ok": "x" * 63, "long": "y" * 64}}]}}
    assert overlong_labels(pcs) == ["spec.cliques[].labels.long: 64 characters"]
    assert overlong_labels({"metadata": {"labels": {"a": "b"}}}) == []


def test_a_leaderworkerset_named_past_41_characters_never_creates_pods() -> None:
    from tests.parity.support.differential import pods_never_created

    lws = {"kind": "LeaderWorkerSet", "metadata": {"name": "x" * 42}}
    assert pods_never_created(lws) == ["name: 42 characters, more than 41"]
    assert pods_never_created(lws | {"metadata": {"name": "x" * 41}}) == []
