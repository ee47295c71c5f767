"""``blame``: each YAML line with its owners (golden files, human and JSON)."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from syncagent.cli.blame import ownedlines
from tests.unit.support.plan import check_golden

NOW = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)
UID = "6f1c2a3b-0000-4000-8000-000000000009"


def _service() -> dict:
    ports_key = 'k:{"port":8000,"protocol":"TCP"}'
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "dynamo-model-1234abcd",
            "namespace": "demo",
            "labels": {"nvidia.com/dynamo-base-model-hash": "1234abcd", "team": "a"},
            "finalizers": ["example.com/keep"],
            "ownerReferences": [
                {
                    "apiVersion": "nvidia.com/v1beta1",
                    "kind": "DynamoGraphDeployment",
                    "name": "g",
                    "uid": UID,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "syncagent/services",
                    "operation": "Apply",
                    "apiVersion": "v1",
                    "time": "2026-11-29T15:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {"f:labels": {"f:nvidia.com/dynamo-base-model-hash": {}}},
                        "f:spec": {
                            "f:ports": {ports_key: {".": {}, "f:port": {}, "f:protocol": {}}},
                            "f:selector": {},
                        },
                    },
                },
                {
                    "manager": "syncagent/ownership",
                    "operation": "Apply",
                    "apiVersion": "v1",
                    "time": "2026-11-29T15:58:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:ownerReferences": {f'k:{{"uid":"{UID}"}}': {}}}},
                },
                {
                    "manager": f"syncagent/owner/{UID}",
                    "operation": "Apply",
                    "apiVersion": "v1",
                    "time": "2026-11-29T15:59:30Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:ownerReferences": {f'k:{{"uid":"{UID}"}}': {}}}},
                },
                {
                    "manager": "kubectl-label",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-28T10:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:labels": {"f:team": {}},
                            "f:finalizers": {'v:"example.com/keep"': {}},
                        }
                    },
                },
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "subresource": "status",
                    "apiVersion": "v1",
                    "time": "2026-11-29T15:00:05Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:loadBalancer": {}}},
                },
            ],
        },
        "spec": {
            "ports": [{"port": 8000, "protocol": "TCP", "targetPort": 8000}],
            "selector": {"app": "x"},
            "clusterIP": "None",
        },
        "status": {"loadBalancer": {}},
    }


def _line(lines: list[ownedlines.BlameLine], text: str) -> ownedlines.BlameLine:
    return next(line for line in lines if line.text.strip() == text)


def test_each_line_has_its_owner() -> None:
    lines = ownedlines.blame_lines(_service())
    owner = _line(lines, "team: a").owners
    assert [(o.manager, o.operation) for o in owner] == [("kubectl-label", "Update")]
    assert _line(lines, "clusterIP: None").owners == ()
    status = _line(lines, "loadBalancer: {}").owners[0]
    assert (status.manager, status.subresource) == ("kube-controller-manager", "status")


def test_co_owners_are_all_listed() -> None:
    lines = ownedlines.blame_lines(_service())
    shared = _line(lines, "- apiVersion: nvidia.com/v1beta1")
    assert {o.manager for o in shared.owners} == {"syncagent/ownership", f"syncagent/owner/{UID}"}
    # members of the atomic reference item inherit its owners
    assert {o.manager for o in _line(lines, f"uid: {UID}").owners} == {
        "syncagent/ownership",
        f"syncagent/owner/{UID}",
    }
    assert shared in ownedlines.co_owned(lines)


def test_list_items_are_readable() -> None:
    lines = ownedlines.blame_lines(_service())
    port = _line(lines, "- port: 8000")
    assert port.item == "[port=8000,protocol=TCP]"
    assert ownedlines.to_text(lines, now=NOW).count("# [port=8000,protocol=TCP]") == 1
    finalizer = _line(lines, "- example.com/keep")
    assert finalizer.item == "[=example.com/keep]"
    assert finalizer.owners[0].manager == "kubectl-label"
    # atomic map (no member owned): its members inherit
    assert _line(lines, "app: x").owners[0].manager == "syncagent/services"
    assert "managedFields" not in ownedlines.to_text(lines, now=NOW)


def test_age() -> None:
    assert ownedlines.age("2026-11-29T15:59:30Z", now=NOW) == "30s"
    assert ownedlines.age("2026-11-29T15:00:00Z", now=NOW) == "1h"
    assert ownedlines.age("2026-11-27T16:00:00Z", now=NOW) == "2d"
    assert ownedlines.age(None, now=NOW) == "-"


def test_json_paths() -> None:
    doc = orjson.loads(ownedlines.to_json(ownedlines.blame_lines(_service()), now=NOW))
    paths = {d["path"] for d in doc if d["owners"]}
    assert ".spec.ports[port=8000,protocol=TCP]" in paths
    assert ".metadata.labels.team" in paths


def test_golden_text() -> None:
    check_golden("blame.txt", ownedlines.to_text(ownedlines.blame_lines(_service()), now=NOW))


def test_golden_json() -> None:
    check_golden("blame.json", ownedlines.to_json(ownedlines.blame_lines(_service()), now=NOW))
