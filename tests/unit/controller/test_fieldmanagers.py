"""Field-manager declarations: unique names, resolvable owners, path coverage."""

from __future__ import annotations

import pytest

import fieldmanagers
from fieldmanagers import ownership, services
from syncagent.cli.pathways import PROGRAMS
from syncagent.controller.reconcilers import Reconcilers
from syncagent.programs.view import DictStore
from tests.support.toypathway import MANAGER as TOY_MANAGER
from tests.support.toypathway.agent import PROGRAMS as WITH_TOY

OURS = PROGRAMS.field_managers()


def test_every_manager_is_ours_and_unique() -> None:
    names = [m.name for m in OURS]
    assert len(names) == len(set(names))
    assert all(fieldmanagers.is_ours(n) for n in names)


def test_per_owner_managers_resolve_to_their_uid() -> None:
    manager = fieldmanagers.by_name("syncagent/owner/1234-abcd", declared=OURS)
    assert manager is not None
    assert manager.name == "syncagent/owner/1234-abcd"
    assert manager.owns(".metadata.ownerReferences[uid=1234-abcd]")


def test_paths_cover_descendants_only() -> None:
    assert services.MANAGER.owns(".spec.ports[port=8000,protocol=TCP].targetPort")
    assert not services.MANAGER.owns(".status.loadBalancer")
    assert ownership.MANAGER.owns(".metadata.ownerReferences[uid=x].controller")
    assert not ownership.MANAGER.owns(".metadata.labels.app")


def test_unknown_manager_is_not_declared() -> None:
    assert fieldmanagers.by_name("kubectl-client-side-apply", declared=OURS) is None


@pytest.mark.parametrize(
    ("manager", "label"),
    [
        ("kube-controller-manager", "kube-controller-manager"),
        ("kubectl-client-side-apply", "kubectl-client-side-apply"),
        ("helm", "helm"),
        ("syncagent/workloads", "syncagent/workloads"),
        ("syncagent/graph-status", "syncagent/graph-status"),
        ("syncagent/grove-scale", "syncagent/grove-scale"),  # a pathway's (Grove declares it)
        ("syncagent/owner/0b6c3e2a-5e0d-4a8c-9d3e-1f2a3b4c5d6e", "syncagent/owner"),
        ("hpa-like", "other"),
        ("syncagent/made-up", "other"),
        ("kubectl-" + "x" * 200, "other"),
        ("", "other"),
    ],
)
def test_metric_labels_name_only_known_managers(manager, label):
    assert fieldmanagers.metric_label(manager, ours=OURS) == label


def test_every_one_of_our_managers_keeps_its_name():
    for manager in OURS:
        assert fieldmanagers.metric_label(manager.name, ours=OURS) == manager.name


def test_a_new_pathways_manager_gets_its_own_label_from_the_registry_alone():
    """The toy pathway declares ``syncagent/toy`` in its package only: plugged into a registry
    it is a label (and ``managers`` knows it), without it the name is bounded to ``other``."""
    assert TOY_MANAGER not in fieldmanagers.COMMON
    ours = WITH_TOY.field_managers()
    assert fieldmanagers.metric_label(TOY_MANAGER.name, ours=ours) == TOY_MANAGER.name
    assert fieldmanagers.by_name(TOY_MANAGER.name, declared=ours) == TOY_MANAGER
    assert fieldmanagers.metric_label(TOY_MANAGER.name, ours=OURS) == "other"
    assert fieldmanagers.by_name(TOY_MANAGER.name, declared=OURS) is None


def test_the_agents_writers_count_under_the_registrys_managers():
    reconcilers = Reconcilers(
        engine=None,  # type: ignore[arg-type]  # nothing is written
        store=DictStore(),
        recorder=None,  # type: ignore[arg-type]
        capabilities=lambda: None,
        programs=WITH_TOY,
    )
    assert TOY_MANAGER in reconcilers.writer().managers
