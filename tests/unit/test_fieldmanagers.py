"""Field-manager declarations: unique names, resolvable owners, path coverage."""

from __future__ import annotations

import pytest

import fieldmanagers
from fieldmanagers import ownership, services


def test_every_manager_is_ours_and_unique() -> None:
    names = [m.name for m in fieldmanagers.ALL]
    assert len(names) == len(set(names))
    assert all(fieldmanagers.is_ours(n) for n in names)


def test_per_owner_managers_resolve_to_their_uid() -> None:
    manager = fieldmanagers.by_name("syncagent/owner/1234-abcd")
    assert manager is not None
    assert manager.name == "syncagent/owner/1234-abcd"
    assert manager.owns(".metadata.ownerReferences[uid=1234-abcd]")


def test_paths_cover_descendants_only() -> None:
    assert services.MANAGER.owns(".spec.ports[port=8000,protocol=TCP].targetPort")
    assert not services.MANAGER.owns(".status.loadBalancer")
    assert ownership.MANAGER.owns(".metadata.ownerReferences[uid=x].controller")
    assert not ownership.MANAGER.owns(".metadata.labels.app")


def test_unknown_manager_is_not_declared() -> None:
    assert fieldmanagers.by_name("kubectl-client-side-apply") is None


@pytest.mark.parametrize(
    ("manager", "label"),
    [
        ("kube-controller-manager", "kube-controller-manager"),
        ("kubectl-client-side-apply", "kubectl-client-side-apply"),
        ("helm", "helm"),
        ("syncagent/workloads", "syncagent/workloads"),
        ("syncagent/graph-status", "syncagent/graph-status"),
        ("syncagent/owner/0b6c3e2a-5e0d-4a8c-9d3e-1f2a3b4c5d6e", "syncagent/owner"),
        ("hpa-like", "other"),
        ("syncagent/made-up", "other"),
        ("kubectl-" + "x" * 200, "other"),
        ("", "other"),
    ],
)
def test_metric_labels_name_only_known_managers(manager, label):
    assert fieldmanagers.metric_label(manager) == label


def test_every_one_of_our_managers_keeps_its_name():
    for manager in fieldmanagers.ALL:
        assert fieldmanagers.metric_label(manager.name) == manager.name
