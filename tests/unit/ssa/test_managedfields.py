from syncagent.ssa import managedfields
from syncagent.ssa.paths import Field, Index, Key, Value, render


def deployment_fields():
    return {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:template": {
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"main"}': {
                            ".": {},
                            "f:image": {},
                            "f:name": {},
                            "f:ports": {
                                'k:{"containerPort":8000,"protocol":"TCP"}': {
                                    ".": {},
                                    "f:containerPort": {},
                                }
                            },
                        }
                    }
                }
            },
        },
    }


def obj_with(*entries):
    return {"metadata": {"name": "x", "managedFields": list(entries)}}


def entry(manager, fields, *, operation="Apply", subresource=None, time="2026-01-01T00:00:00Z"):
    raw = {
        "manager": manager,
        "operation": operation,
        "apiVersion": "apps/v1",
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        raw["subresource"] = subresource
    return raw


def test_decode_fields_marks_leaves_and_dot_nodes():
    paths = {render(p) for p in managedfields.decode_fields(deployment_fields())}
    assert ".metadata.labels" in paths  # "." marks the map itself
    assert ".metadata.labels.app" in paths
    assert ".spec.replicas" in paths
    assert ".spec.template.spec.containers[name=main]" in paths
    assert ".spec.template.spec.containers[name=main].image" in paths
    assert (
        ".spec.template.spec.containers[name=main].ports[containerPort=8000,protocol=TCP]" in paths
    )
    # Containers without "." are not themselves owned.
    assert ".spec.template.spec.containers" not in paths
    assert ".spec.template" not in paths


def test_decode_value_and_index_elements():
    fields = {
        "f:metadata": {"f:finalizers": {".": {}, 'v:"example.com/x"': {}}},
        "f:a": {"i:2": {}},
    }
    paths = managedfields.decode_fields(fields)
    assert (Field("metadata"), Field("finalizers"), Value("example.com/x")) in paths
    assert (Field("a"), Index(2)) in paths
    assert (Field("metadata"), Field("finalizers")) in paths


def test_decode_key_keeps_typed_values():
    element = managedfields.decode_element('k:{"port":8000,"protocol":"TCP"}')
    assert element == Key((("port", 8000), ("protocol", "TCP")))


def test_decode_entries_with_operation_subresource_and_time():
    obj = obj_with(
        entry("a", {"f:spec": {"f:replicas": {}}}),
        entry(
            "kube-controller-manager",
            {"f:status": {"f:replicas": {}}},
            operation="Update",
            subresource="status",
        ),
    )
    entries = managedfields.decode(obj)
    assert [(e.manager, e.operation, e.subresource) for e in entries] == [
        ("a", "Apply", ""),
        ("kube-controller-manager", "Update", "status"),
    ]
    assert entries[0].time == "2026-01-01T00:00:00Z"
    assert entries[0].paths() == [".spec.replicas"]


def test_entry_for_matches_operation_and_subresource():
    obj = obj_with(
        entry("m", {"f:spec": {"f:a": {}}}),
        entry("m", {"f:status": {"f:b": {}}}, subresource="status"),
        entry("m", {"f:spec": {"f:c": {}}}, operation="Update"),
    )
    assert managedfields.entry_for(obj, "m").paths() == [".spec.a"]
    assert managedfields.entry_for(obj, "m", subresource="status").paths() == [".status.b"]
    assert managedfields.entry_for(obj, "m", operation="Update").paths() == [".spec.c"]
    assert managedfields.entry_for(obj, "other") is None


def test_same_set_ignores_time_only():
    a = managedfields.decode_entry(entry("m", deployment_fields(), time="t1"))
    b = managedfields.decode_entry(entry("m", deployment_fields(), time="t2"))
    assert a.same_set(b)
    fewer = deployment_fields()
    del fewer["f:metadata"]["f:labels"]["f:app"]
    c = managedfields.decode_entry(entry("m", fewer, time="t1"))
    assert not a.same_set(c)


def test_blame_lists_every_owner_of_shared_paths():
    obj = obj_with(
        entry("syncagent/workloads", deployment_fields()),
        entry("kubectl-edit", {"f:spec": {"f:replicas": {}}}, operation="Update"),
    )
    owners = managedfields.blame(obj)
    assert [o.manager for o in owners[".spec.replicas"]] == ["syncagent/workloads", "kubectl-edit"]
    assert owners[".spec.replicas"][1].operation == "Update"
    image = ".spec.template.spec.containers[name=main].image"
    assert [o.manager for o in owners[image]] == ["syncagent/workloads"]
    assert list(owners) == sorted(owners)


def test_managers_under_prefix():
    obj = obj_with(
        entry("a", {"f:metadata": {"f:ownerReferences": {'k:{"uid":"u1"}': {"f:uid": {}}}}}),
        entry("b", {"f:spec": {"f:x": {}}}),
    )
    assert managedfields.managers_under(obj, (Field("metadata"), Field("ownerReferences"))) == {"a"}


def test_managers_under_agrees_with_every_decoded_path():
    # managers_under follows the prefix down the raw fieldsV1 instead of decoding every path;
    # the definition it must agree with: a manager owns the prefix or a decoded path below it.
    refs = {
        "f:metadata": {
            "f:ownerReferences": {
                'k:{"uid":"u1"}': {".": {}, "f:uid": {}, "f:controller": {}},
                'k:{"uid":"u2"}': {},
            },
            "f:labels": {"f:app": {}},
        }
    }
    obj = obj_with(
        entry("content", deployment_fields()),
        entry("owners", refs),
        entry("status", {"f:status": {"f:replicas": {}}}, subresource="status"),
        entry("empty", {}),
    )
    entries = managedfields.decode(obj)
    paths = {p for e in entries for p in e.fields}
    prefixes = {p[:n] for p in paths for n in range(len(p) + 1)}
    prefixes |= {
        (Field("spec"), Field("absent")),
        (Field("metadata"), Field("ownerReferences"), Key((("uid", "u3"),))),
        (Field("spec"), Field("replicas"), Field("below-a-leaf")),
    }
    for prefix in prefixes:
        n = len(prefix)
        expected = {e.manager for e in entries if any(p[:n] == prefix for p in e.fields)}
        assert managedfields.managers_under(obj, prefix) == expected, render(prefix)
