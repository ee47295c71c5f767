import copy

from syncagent.ssa.compare import differences

MANAGER = "syncagent/workloads"


def live_deployment(*, fields=None, time="2026-01-01T00:00:00Z", labels=None):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "ns",
            "resourceVersion": "10",
            "generation": 1,
            "labels": labels if labels is not None else {"app": "web", "team": "x"},
            "managedFields": [
                {
                    "manager": MANAGER,
                    "operation": "Apply",
                    "apiVersion": "apps/v1",
                    "time": time,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": fields or {"f:metadata": {"f:labels": {"f:app": {}}}},
                }
            ],
        },
        "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate"}},
        "status": {"replicas": 1},
    }


def test_identical_objects_have_no_differences():
    live = live_deployment()
    assert differences(live, copy.deepcopy(live), manager=MANAGER) == []


def test_time_status_generation_and_resource_version_are_ignored():
    live = live_deployment()
    dry = live_deployment(time="2030-01-01T00:00:00Z")
    dry["metadata"]["resourceVersion"] = "11"
    dry["metadata"]["generation"] = 2
    dry["status"] = {"replicas": 5}
    assert differences(live, dry, manager=MANAGER) == []


def test_spec_change_is_found():
    live = live_deployment()
    dry = copy.deepcopy(live)
    dry["spec"]["replicas"] = 3
    assert differences(live, dry, manager=MANAGER) == [".spec"]


def test_any_top_level_field_counts_not_only_spec():
    live = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {},
        "rules": [{"verbs": ["get"]}],
    }
    dry = copy.deepcopy(live)
    dry["rules"][0]["verbs"].append("list")
    assert differences(live, dry, manager=MANAGER) == [".rules"]


def test_label_removed_is_found():
    live = live_deployment()
    dry = live_deployment(labels={"team": "x"})
    assert differences(live, dry, manager=MANAGER) == [".metadata.labels"]


def test_ownership_only_change_is_found():
    live = live_deployment(fields={"f:metadata": {"f:labels": {"f:app": {}, "f:team": {}}}})
    dry = live_deployment(fields={"f:metadata": {"f:labels": {"f:app": {}}}})
    assert differences(live, dry, manager=MANAGER) == [f"managedFields[manager={MANAGER}]"]


def test_manager_entry_appearing_is_found():
    live = live_deployment()
    live["metadata"]["managedFields"] = []
    dry = live_deployment()
    assert differences(live, dry, manager=MANAGER) == [f"managedFields[manager={MANAGER}]"]


def test_other_managers_entries_do_not_count():
    live = live_deployment()
    dry = copy.deepcopy(live)
    dry["metadata"]["managedFields"].append(
        {"manager": "other", "operation": "Update", "fieldsV1": {"f:spec": {}}}
    )
    assert differences(live, dry, manager=MANAGER) == []


def test_status_apply_compares_status_only():
    live = live_deployment()
    dry = copy.deepcopy(live)
    dry["spec"]["replicas"] = 9  # cannot come from a status apply; not compared
    assert differences(live, dry, manager=MANAGER, subresource="status") == []
    dry["status"]["replicas"] = 2
    assert differences(live, dry, manager=MANAGER, subresource="status") == [".status"]


def test_empty_and_absent_labels_are_equal():
    live = live_deployment()
    del live["metadata"]["labels"]
    dry = copy.deepcopy(live)
    dry["metadata"]["labels"] = {}
    assert differences(live, dry, manager=MANAGER) == []


def test_identity_fields_missing_from_list_items_do_not_count():
    live = live_deployment()
    del live["apiVersion"], live["kind"]
    assert differences(live, live_deployment(), manager=MANAGER) == []
